// AuthCallout mode's NatsServer status: the SUBSZ replies counted into
// AuthorizerAvailable, the status shape, and the event on a change.
#include "switchboard/operator_logic/callout_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// One server's SUBSZ answer as nats-server 2.15 sends it (trimmed).
std::string Reply(const std::string& name, int total) {
  json data = {{"server_id", "N" + name}, {"num_subscriptions", 7}, {"total", total}};
  if (total > 0) {
    data["subscriptions_list"] =
        json::array({{{"account", "SWITCHBOARD_AUTH"}, {"subject", "$SYS.REQ.USER.AUTH"}}});
  }
  return json{{"server", {{"name", name}, {"id", "N" + name}}}, {"data", data}}.dump();
}

TEST(AuthorizerPing, AsksTheCalloutAccountForTheCalloutSubject) {
  json body = json::parse(AuthorizerPingBody());
  EXPECT_EQ(body["account"], "SWITCHBOARD_AUTH");
  EXPECT_EQ(body["test"], "$SYS.REQ.USER.AUTH");
  EXPECT_EQ(body["subscriptions"], true);
}

TEST(DecideAuthorizerAvailability, Table) {
  struct Case {
    std::string name;
    Result<std::vector<std::string>> replies;
    std::string status, reason;
    int authorizers, servers;
    std::vector<std::string> in_message, not_in_message;
  };
  const std::vector<Case> cases = {
      {"every server has one",
       std::vector<std::string>{Reply("nats-0", 1), Reply("nats-1", 2), Reply("nats-2", 1)},
       "True",
       "AuthorizersSubscribed",
       3,
       3,
       {"3 of 3 server(s)"},
       {"unreadable"}},
      {"one server has none: it reaches one over the routes",
       std::vector<std::string>{Reply("nats-0", 1), Reply("nats-1", 0), Reply("nats-2", 1)},
       "True",
       "AuthorizersSubscribed",
       2,
       3,
       {"nats-1 reach", "2 of 3", "routes"},
       {"nats-0 reach"}},
      {"no server has one",
       std::vector<std::string>{Reply("nats-0", 0)},
       "False",
       "NoAuthorizer",
       0,
       1,
       {"nats-0", "Authorization Violation"},
       {}},
      {"nobody answered",
       std::vector<std::string>{},
       "Unknown",
       "ServerUnreachable",
       0,
       0,
       {"no NATS server answered", "$SYS.REQ.SERVER.PING.SUBSZ"},
       {}},
      {"asking failed",
       Status::Unauthenticated("authorization violation"),
       "Unknown",
       "ServerUnreachable",
       0,
       0,
       {"switchboard-system", "authorization violation"},
       {}},
      {"an unreadable reply is not counted",
       std::vector<std::string>{Reply("nats-0", 1), "{\"error\":\"x\"}", "not json"},
       "True",
       "AuthorizersSubscribed",
       1,
       1,
       {"1 of 1", "2 unreadable"},
       {}},
      {"only unreadable replies",
       std::vector<std::string>{"[]"},
       "Unknown",
       "ServerUnreachable",
       0,
       0,
       {"1 unreadable"},
       {}},
      {"many servers without: the message names five",
       std::vector<std::string>{Reply("a", 0), Reply("b", 0), Reply("c", 0), Reply("d", 0),
                                Reply("e", 0), Reply("f", 0), Reply("g", 0)},
       "False",
       "NoAuthorizer",
       0,
       7,
       {"a, b, c, d, e and 2 more"},
       {"f,"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto a = DecideAuthorizerAvailability(c.replies);
    EXPECT_EQ(a.status, c.status);
    EXPECT_EQ(a.reason, c.reason);
    EXPECT_EQ(a.authorizers, c.authorizers);
    EXPECT_EQ(a.servers, c.servers);
    for (const auto& s : c.in_message) EXPECT_THAT(a.message, HasSubstr(s));
    for (const auto& s : c.not_in_message) EXPECT_THAT(a.message, Not(HasSubstr(s)));
  }
}

const json* Find(const json& status, std::string_view type) {
  for (const auto& c : status["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

TEST(NotOnStaticConfigMessage, NamesTheSecretTheFixAndTheError) {
  const std::string m = NotOnStaticConfigMessage("nats/shared-switchboard", "connect: no nonce");
  EXPECT_NE(m.find("Secret nats/shared-switchboard"), std::string::npos) << m;
  EXPECT_NE(m.find("restart them one at a time"), std::string::npos) << m;
  EXPECT_NE(m.find("(connect: no nonce)"), std::string::npos) << m;
}

TEST(ComputeCalloutServerStatus, ReadyAuthCalloutAndNoConfigFits) {
  json previous = {{"configHash", "sha256:old"},
                   {"conditions",
                    {{{"type", "Ready"}, {"status", "True"}, {"reason", "ConfigRendered"}},
                     {{"type", "ConfigFits"}, {"status", "True"}, {"reason", "Fits"}}}}};
  CalloutServerStatusInput in;
  in.generation = 4;
  in.installations = 12;
  in.config_hash = "sha256:new";
  in.issuer = "AISSUER";
  in.account = "HATCHET";
  in.authorizers = DecideAuthorizerAvailability(std::vector<std::string>{Reply("n0", 1)});
  json s = ComputeCalloutServerStatus(previous, in, "2026-01-01T00:00:00Z");
  EXPECT_EQ(s["observedGeneration"], 4);
  EXPECT_EQ(s["installations"], 12);
  EXPECT_EQ(s["configHash"], "sha256:new");
  EXPECT_EQ(
      s["authCallout"],
      (json{{"issuer", "AISSUER"}, {"account", "HATCHET"}, {"authorizers", 1}, {"servers", 1}}));
  EXPECT_EQ(Find(s, "ConfigFits"), nullptr);
  ASSERT_NE(Find(s, "Ready"), nullptr);
  EXPECT_EQ((*Find(s, "Ready"))["reason"], "CalloutConfigured");
  EXPECT_EQ((*Find(s, "Ready"))["status"], "True");
  ASSERT_NE(Find(s, "AuthorizerAvailable"), nullptr);
  EXPECT_EQ((*Find(s, "AuthorizerAvailable"))["status"], "True");
  EXPECT_EQ(s["conditions"][0]["type"], "Ready");
}

TEST(ComputeCalloutServerStatus, WithoutAnAnswerTheLastCountsStay) {
  json previous = {
      {"authCallout", {{"issuer", "AOLD"}, {"authorizers", 2}, {"servers", 3}}},
      {"conditions",
       {{{"type", "AuthorizerAvailable"}, {"status", "False"}, {"reason", "NoAuthorizer"}}}}};
  CalloutServerStatusInput in;
  in.account = "HATCHET";
  in.failure_reason = "SecretConflict";
  in.failure_message = "Secret nats/x exists and is not ours";
  json s = ComputeCalloutServerStatus(previous, in, "2026-01-01T00:00:00Z");
  EXPECT_EQ(s["authCallout"],
            (json{{"issuer", "AOLD"}, {"account", "HATCHET"}, {"authorizers", 2}, {"servers", 3}}));
  EXPECT_EQ((*Find(s, "AuthorizerAvailable"))["reason"], "NoAuthorizer");
  EXPECT_EQ((*Find(s, "Ready"))["status"], "False");
  EXPECT_EQ((*Find(s, "Ready"))["reason"], "SecretConflict");
}

TEST(WithoutCalloutStatus, DropsOnlyTheCalloutParts) {
  json previous = {{"authCallout", {{"issuer", "A"}}},
                   {"configHash", "h"},
                   {"conditions",
                    {{{"type", "Ready"}, {"status", "True"}},
                     {{"type", "AuthorizerAvailable"}, {"status", "True"}}}}};
  json s = WithoutCalloutStatus(previous);
  EXPECT_FALSE(s.contains("authCallout"));
  EXPECT_EQ(s["configHash"], "h");
  ASSERT_EQ(s["conditions"].size(), 1u);
  EXPECT_EQ(s["conditions"][0]["type"], "Ready");
  EXPECT_EQ(WithoutCalloutStatus(json()), json());
}

TEST(AuthorizerAvailableEvent, Table) {
  auto with = [](std::string status, std::string reason) {
    if (status.empty()) return json{{"conditions", json::array()}};
    return json{{"conditions",
                 {{{"type", "AuthorizerAvailable"},
                   {"status", status},
                   {"reason", reason},
                   {"message", "m"}}}}};
  };
  struct Case {
    std::string name;
    json before, after;
    bool event, warning;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"first True: nothing", with("", ""), with("True", "AuthorizersSubscribed"), false, false,
       ""},
      {"True to False: Warning", with("True", "AuthorizersSubscribed"),
       with("False", "NoAuthorizer"), true, true, "NoAuthorizer"},
      {"first False: Warning", with("", ""), with("False", "NoAuthorizer"), true, true,
       "NoAuthorizer"},
      {"still False: nothing", with("False", "NoAuthorizer"), with("False", "NoAuthorizer"), false,
       false, ""},
      {"False to True: Normal", with("False", "NoAuthorizer"),
       with("True", "AuthorizersSubscribed"), true, false, "AuthorizersSubscribed"},
      {"Unknown to True: nothing", with("Unknown", "ServerUnreachable"),
       with("True", "AuthorizersSubscribed"), false, false, ""},
      {"to Unknown: nothing", with("True", "AuthorizersSubscribed"),
       with("Unknown", "ServerUnreachable"), false, false, ""},
      {"condition gone: nothing", with("False", "NoAuthorizer"), with("", ""), false, false, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto ev = AuthorizerAvailableEvent(c.before, c.after);
    ASSERT_EQ(ev.has_value(), c.event);
    if (!ev) continue;
    EXPECT_EQ(ev->warning, c.warning);
    EXPECT_EQ(ev->reason, c.reason);
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
