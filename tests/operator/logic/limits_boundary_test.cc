// The render refuses nothing the rules accept: each limit of api/limits.h
// walked at its boundary through rules::Validate and RenderNatsConfig. At
// the limit the rules accept and the render renders (a user name with the
// longest rotation suffix included); one past it the rules refuse.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "switchboard/api/limits.h"
#include "switchboard/api/views.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/rotation.h"
#include "switchboard/rules/validate.h"
#include "switchboard/testing/objects.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

std::string FakeHash() { return "$2b$11$" + std::string(53, 'h'); }

json Server(const std::string& ns = "nats", const std::string& name = "shared",
            json max_payload = "16Mi") {
  return testing::ServerBuilder(ns, name)
      .Url("nats://nats-0.nats.nats.svc:4222,nats://nats-1.nats.nats.svc:4222")
      .AllowAll()
      .MaxPayload(std::move(max_payload))
      .Json();
}

json Backend(const std::string& ns, const std::string& name, const std::string& prefix,
             const std::string& username = "") {
  testing::BackendBuilder b(ns, name);
  b.Prefix(prefix);
  if (!username.empty()) b.Username(username);
  return b.Json();
}

std::string Errors(const rules::Report& r) {
  std::string out;
  for (const auto& f : r.errors) out += f.ToString() + "\n";
  return out;
}

rules::Report Judge(const json& object) {
  rules::Context context;
  context.servers.push_back(Server());
  return rules::Validate(object, context, rules::Operation::kCreate);
}

// The backend as the operator renders it: its user, and the longest name a
// rotation can give that user.
Installation InstallationOf(const json& backend) {
  json defaulted = rules::DefaultedCopy(backend);
  api::BackendView v(defaulted);
  return {v.ns(),
          v.name(),
          v.subject_prefix(),
          {{RotatedUsername(v.username(), INT_MAX), FakeHash()}, {v.username(), FakeHash()}}};
}

// Accepted by the rules => rendered whole.
void ExpectAcceptedAndRendered(const json& backend, const json& server = Server()) {
  rules::Report report = Judge(backend);
  ASSERT_TRUE(report.ok()) << Errors(report);
  rules::Report server_report =
      rules::Validate(server, rules::Context{}, rules::Operation::kCreate);
  ASSERT_TRUE(server_report.ok()) << Errors(server_report);

  api::NatsServerView sv(server);
  RenderInput in;
  in.server_ns = sv.ns();
  in.server_name = sv.name();
  in.max_payload = sv.max_payload().value_or(0);
  in.installations.push_back(InstallationOf(backend));
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& rej : r->rejected) ADD_FAILURE() << "render refused: " << rej.ToString();
  EXPECT_EQ(r->installations, 1);
  for (const auto& user : in.installations[0].users) {
    EXPECT_NE(r->text.find("{user: \"" + user.username + "\""), std::string::npos)
        << user.username.size();
  }
}

void ExpectRefusedAt(const json& object, const std::string& field) {
  rules::Report report = object.value("kind", "") == "NatsServer"
                             ? rules::Validate(object, rules::Context{}, rules::Operation::kCreate)
                             : Judge(object);
  ASSERT_FALSE(report.ok()) << field;
  bool named = false;
  for (const auto& f : report.errors) named = named || f.field == field;
  EXPECT_TRUE(named) << "no error at " << field << " in:\n" << Errors(report);
}

TEST(LimitsBoundary, SubjectPrefixLength) {
  const size_t n = api::kMaxSubjectPrefixLength;
  ExpectAcceptedAndRendered(Backend("team-a", "hatchet", std::string(n, 'p')));
  // Dotted, so tokens stay within their own bound.
  std::string dotted = "hatchet." + std::string(n - 8, 'p');
  ASSERT_EQ(dotted.size(), n);
  ExpectAcceptedAndRendered(Backend("team-a", "hatchet", dotted));
  ExpectRefusedAt(Backend("team-a", "hatchet", std::string(n + 1, 'p')), "spec.nats.subjectPrefix");
}

TEST(LimitsBoundary, SubjectPrefixTokens) {
  std::string prefix = "t";
  for (size_t i = 1; i < api::kMaxSubjectPrefixTokens; ++i) prefix += ".t";
  ExpectAcceptedAndRendered(Backend("team-a", "hatchet", prefix));
}

TEST(LimitsBoundary, UsernameLengthWithTheLongestRotationSuffix) {
  const size_t n = api::kMaxUsernameLength;
  ASSERT_EQ(RotatedUsername(std::string(n, 'u'), INT_MAX).size(), api::kMaxRenderedUsernameLength);
  ExpectAcceptedAndRendered(Backend("team-a", "hatchet", "p", std::string(n, 'u')));
  ExpectRefusedAt(Backend("team-a", "hatchet", "p", std::string(n + 1, 'u')),
                  "spec.nats.credentials.username");
  // The default user name <namespace>-<name> at the limit, and one past it.
  std::string ns(api::kMaxDnsLabelLength, 'n');
  ExpectAcceptedAndRendered(Backend(ns, std::string(n - ns.size() - 1, 'b'), "p"));
  ExpectRefusedAt(Backend(ns, std::string(n - ns.size(), 'b'), "p"),
                  "spec.nats.credentials.username");
}

TEST(LimitsBoundary, BackendNameAndNamespaceLength) {
  std::string ns(api::kMaxDnsLabelLength, 'n');
  std::string name(api::kMaxBackendNameLength, 'b');
  ExpectAcceptedAndRendered(Backend(ns, name, "p", "u"));
  ExpectRefusedAt(Backend(ns, name + "b", "p", "u"), "metadata.name");
  ExpectRefusedAt(Backend(ns + "n", name, "p", "u"), "metadata.namespace");
}

TEST(LimitsBoundary, ServerNameAndNamespaceLength) {
  std::string ns(api::kMaxDnsLabelLength, 'n');
  std::string name(api::kMaxServerNameLength, 's');
  ExpectAcceptedAndRendered(Backend("team-a", "hatchet", "p"), Server(ns, name));
  ExpectRefusedAt(Server(ns, name + "s"), "metadata.name");
  ExpectRefusedAt(Server(ns + "n", name), "metadata.namespace");
}

TEST(LimitsBoundary, MaxPayload) {
  for (int64_t bytes : {api::kEngineMaxPayload, api::kNatsMaxPayloadLimit}) {
    ExpectAcceptedAndRendered(Backend("team-a", "hatchet", "p"),
                              Server("nats", "shared", json(bytes)));
  }
  ExpectAcceptedAndRendered(Backend("team-a", "hatchet", "p"), Server("nats", "shared", "64Mi"));
  for (int64_t bytes : {api::kEngineMaxPayload - 1, api::kNatsMaxPayloadLimit + 1}) {
    ExpectRefusedAt(Server("nats", "shared", json(bytes)), "spec.maxPayload");
  }
}

// Installation limits: at each bound the rules accept the backend (bound
// to a server with isolation: Accounts) and the render writes its account's
// limits; one past it the rules refuse the field and the render leaves the
// installation out.
TEST(LimitsBoundary, InstallationLimits) {
  json server = Server();
  server["spec"]["isolation"] = "Accounts";
  rules::Context context;
  context.servers.push_back(server);
  struct Bound {
    const char* field;
    json value;
    bool ok;
  };
  const Bound bounds[] = {
      {"maxConnections", api::kMinInstallationConnections, true},
      {"maxConnections", api::kMaxInstallationConnections, true},
      {"maxConnections", api::kMinInstallationConnections - 1, false},
      {"maxConnections", api::kMaxInstallationConnections + 1, false},
      {"maxSubscriptions", api::kMinInstallationSubscriptions, true},
      {"maxSubscriptions", api::kMaxInstallationSubscriptions, true},
      {"maxSubscriptions", api::kMinInstallationSubscriptions - 1, false},
      {"maxSubscriptions", api::kMaxInstallationSubscriptions + 1, false},
      {"maxPayload", api::kEngineMaxPayload, true},
      {"maxPayload", api::kNatsMaxPayloadLimit, true},
      {"maxPayload", api::kEngineMaxPayload - 1, false},
      {"maxPayload", api::kNatsMaxPayloadLimit + 1, false},
  };
  for (const Bound& b : bounds) {
    SCOPED_TRACE(std::string(b.field) + " " + b.value.dump());
    json backend = Backend("team-a", "hatchet", "hatchet.team-a");
    backend["spec"]["nats"]["limits"] = {{b.field, b.value}};
    rules::Report report = rules::Validate(backend, context, rules::Operation::kCreate);
    EXPECT_EQ(report.ok(), b.ok) << Errors(report);
    if (!b.ok) {
      ASSERT_FALSE(report.errors.empty());
      EXPECT_EQ(report.errors[0].field, "spec.nats.limits." + std::string(b.field));
    }
    RenderInput in;
    in.server_ns = "nats";
    in.server_name = "shared";
    in.isolation = Isolation::kAccounts;
    in.max_payload = api::kNatsMaxPayloadLimit;  // so the account's own value is what is judged
    Installation inst = InstallationOf(backend);
    inst.limits = api::BackendView(backend).limits();
    in.installations.push_back(inst);
    auto r = RenderNatsConfig(in);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->installations, b.ok ? 1 : 0);
    if (b.ok) {
      EXPECT_NE(r->text.find("limits: {"), std::string::npos) << r->text;
    } else {
      ASSERT_EQ(r->rejected.size(), 1u);
      EXPECT_EQ(r->rejected[0].field, "spec.nats.limits." + std::string(b.field));
    }
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
