#include "switchboard/operator_logic/usage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/testing/directory.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

// The replies and events as nats-server 2.9.10 wrote them (usage_nats_test
// checks the same against the real server), trimmed.
constexpr const char* kConnz = R"json({"server":{"name":"nats-0","id":"NID0"},"data":{
  "server_id":"NID0","total":3,"offset":0,"limit":1024,"connections":[
  {"cid":4,"in_msgs":3,"out_msgs":6,"in_bytes":15,"out_bytes":30,"subscriptions":1,"authorized_user":"a-user"},
  {"cid":5,"in_msgs":1,"out_msgs":2,"in_bytes":5,"out_bytes":10,"subscriptions":4,"authorized_user":"a-user","account":"ns/a"},
  {"cid":6,"in_msgs":3,"out_msgs":3,"in_bytes":15,"out_bytes":15,"subscriptions":1,"authorized_user":"b-user#2"}]}})json";
constexpr const char* kStatz =
    R"json({"server":{"name":"nats-0","id":"NID0"},"data":{"server_id":"NID0",
  "account_statz":[{"acc":"ns/a","conns":2,"total_conns":2,"sent":{"msgs":12,"bytes":60},
  "received":{"msgs":6,"bytes":30},"slow_consumers":1}]}})json";
constexpr const char* kDisconnect = R"json({"type":"io.nats.server.advisory.v1.client_disconnect",
  "server":{"name":"nats-0","id":"NID0"},"client":{"id":6,"acc":"ns/a","user":"a-user"},
  "sent":{"msgs":3,"bytes":15},"received":{"msgs":6,"bytes":30},"reason":"Slow Consumer (Write Deadline)"
})json";

TEST(UsageRequests, AreTheMonitorsOptions) {
  EXPECT_EQ(json::parse(UsageConnzRequest("", 0)),
            json({{"auth", true}, {"offset", 0}, {"limit", kConnzPageSize}}));
  EXPECT_EQ(json::parse(UsageConnzRequest("HATCHET", 2048, 10)),
            json({{"auth", true}, {"acc", "HATCHET"}, {"offset", 2048}, {"limit", 10}}));
  EXPECT_EQ(ServerConnzSubject("NID0"), "$SYS.REQ.SERVER.NID0.CONNZ");
  EXPECT_EQ(json::parse(AccountStatzRequest()), json({{"accounts", json::array()}}));
}

TEST(ParseUsageConnz, ReadsEveryConnection) {
  auto page = ParseUsageConnz(kConnz);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->server_id, "NID0");
  EXPECT_EQ(page->server_name, "nats-0");
  EXPECT_EQ(page->total, 3);
  ASSERT_EQ(page->connections.size(), 3u);
  const SampledConnection& c = page->connections[1];
  EXPECT_EQ(c.cid, 5u);
  EXPECT_EQ(c.user, "a-user");
  EXPECT_EQ(c.account, "ns/a");
  EXPECT_EQ(c.subscriptions, 4);
  EXPECT_EQ(c.traffic, (Traffic{1, 2, 5, 10}));
}

TEST(ParseUsageConnz, RefusesWhatIsNotAReply) {
  struct Case {
    const char* name;
    const char* body;
    StatusCode want;
  };
  const Case cases[] = {
      {"not JSON", "nope", StatusCode::kInvalidArgument},
      {"no data", R"json({"server":{"id":"N"}})json", StatusCode::kInvalidArgument},
      {"no server id", R"json({"data":{}})json", StatusCode::kInvalidArgument},
      {"the server's error", R"json({"error":{"code":403,"description":"bad"}})json",
       StatusCode::kUnavailable},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseUsageConnz(c.body).status().code(), c.want) << c.name;
  }
}

TEST(RemainingConnzOffsets, PagesUntilTheTotal) {
  struct Case {
    int64_t total, offset;
    int limit;
    std::vector<int64_t> want;
  };
  const Case cases[] = {
      {0, 0, 1024, {}},           {1024, 0, 1024, {}},
      {1025, 0, 1024, {1024}},    {3000, 0, 1024, {1024, 2048}},
      {3000, 1024, 1024, {2048}}, {5, 0, 0, {}},
  };
  for (const auto& c : cases) {
    UsageConnzPage page;
    page.total = c.total;
    page.offset = c.offset;
    EXPECT_EQ(RemainingConnzOffsets(page, c.limit), c.want) << c.total << "@" << c.offset;
  }
}

TEST(ParseDisconnectEvent, SentIsWhatTheClientPublished) {
  auto c = ParseDisconnectEvent(kDisconnect);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server_id, "NID0");
  EXPECT_EQ(c->cid, 6u);
  EXPECT_EQ(c->account, "ns/a");
  EXPECT_EQ(c->user, "a-user");
  EXPECT_EQ(c->traffic, (Traffic{3, 6, 15, 30}));
  EXPECT_TRUE(c->slow_consumer);
  json other = json::parse(kDisconnect);
  other["reason"] = "Client Closed";
  EXPECT_FALSE(ParseDisconnectEvent(other.dump())->slow_consumer);
  other["client"]["name_tag"] = "b-user#3";
  EXPECT_EQ(ParseDisconnectEvent(other.dump())->user, "b-user#3");
  other["type"] = "io.nats.server.advisory.v1.client_connect";
  EXPECT_FALSE(ParseDisconnectEvent(other.dump()).ok());
  EXPECT_FALSE(ParseDisconnectEvent("{}").ok());
}

TEST(ParseAccountStatz, ReceivedIsWhatTheClientsPublished) {
  auto stats = ParseAccountStatz(kStatz);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 1u);
  const AccountStat& s = (*stats)[0];
  EXPECT_EQ(s.server_name, "nats-0");
  EXPECT_EQ(s.account, "ns/a");
  EXPECT_EQ(s.connections, 2);
  EXPECT_EQ(s.traffic, (Traffic{6, 12, 30, 60}));
  EXPECT_EQ(s.slow_consumers, 1);
  EXPECT_FALSE(ParseAccountStatz(R"json({"error":{"description":"x"}})json").ok());
}

// nats-server 2.10+ (2.15 wrote this, trimmed, in three routed servers):
// the account's totals include what crossed the routes, and say how much.
// Only the clients' part counts: 10 published on s1 and delivered to one
// subscriber on each of three servers are 10 in, 30 out over the cluster.
TEST(ParseAccountStatz, WhatCrossedRoutesIsLeftOut) {
  constexpr const char* kS1 = R"json({"server":{"name":"s1","id":"N1"},"data":{"server_id":"N1",
    "account_statz":[{"acc":"AAI","name":"team/a","conns":1,
    "sent":{"msgs":30,"bytes":150,"gateways":{"msgs":0,"bytes":0},"routes":{"msgs":20,"bytes":100},"leafs":{"msgs":0,"bytes":0}},
    "received":{"msgs":10,"bytes":50,"gateways":{"msgs":0,"bytes":0},"routes":{"msgs":0,"bytes":0},"leafs":{"msgs":0,"bytes":0}},
    "slow_consumers":0}]}})json";
  constexpr const char* kS2 = R"json({"server":{"name":"s2","id":"N2"},"data":{"server_id":"N2",
    "account_statz":[{"acc":"AAI","name":"team/a","conns":1,
    "sent":{"msgs":10,"bytes":50,"gateways":{"msgs":0,"bytes":0},"routes":{"msgs":0,"bytes":0},"leafs":{"msgs":0,"bytes":0}},
    "received":{"msgs":10,"bytes":50,"gateways":{"msgs":0,"bytes":0},"routes":{"msgs":10,"bytes":50},"leafs":{"msgs":0,"bytes":0}},
    "slow_consumers":0}]}})json";
  auto s1 = ParseAccountStatz(kS1);
  auto s2 = ParseAccountStatz(kS2);
  ASSERT_TRUE(s1.ok() && s2.ok());
  ASSERT_EQ(s1->size(), 1u);
  ASSERT_EQ(s2->size(), 1u);
  EXPECT_EQ((*s1)[0].traffic, (Traffic{10, 10, 50, 50}));
  EXPECT_EQ((*s2)[0].traffic, (Traffic{0, 10, 0, 50}));
}

TEST(InstallationOf, ByUserOrByAccount) {
  UsageDirectory d;
  d.by_user = {{"a-user", "ns/a"}, {"a-user-r1", "ns/a"}, {"b-user", "ns/b"}};
  d.by_account = {{"ns/a", "ns/a"}};
  struct Case {
    Isolation isolation;
    const char *account, *user, *want;
  };
  const Case cases[] = {
      {Isolation::kPermissions, "$G", "a-user", "ns/a"},
      {Isolation::kPermissions, "$G", "a-user-r1", "ns/a"},
      {Isolation::kPermissions, "HATCHET", "b-user#2", "ns/b"},
      {Isolation::kPermissions, "$G", "b-user#", "ns/b"},
      {Isolation::kPermissions, "$G", "c-user", nullptr},
      {Isolation::kPermissions, "$G", "", nullptr},
      {Isolation::kAccounts, "ns/a", "whoever", "ns/a"},
      {Isolation::kAccounts, "ns/b", "b-user", nullptr},
  };
  for (const auto& c : cases) {
    d.isolation = c.isolation;
    const std::string* got = InstallationOf(d, c.account, c.user);
    if (c.want == nullptr) {
      EXPECT_EQ(got, nullptr) << c.user;
    } else {
      ASSERT_NE(got, nullptr) << c.user;
      EXPECT_EQ(*got, c.want) << c.user;
    }
  }
}

SampledConnection Conn(const char* server, uint64_t cid, const char* user, int64_t subs, Traffic t,
                       const char* account = "$G") {
  return {server, std::string("name-") + server, cid, account, user, subs, t};
}
ClosedConnection Closed(const char* server, uint64_t cid, const char* user, Traffic t,
                        bool slow = false, const char* account = "$G") {
  return {server, std::string("name-") + server, cid, account, user, t, slow};
}

UsageDirectory Shared() {
  UsageDirectory d;
  d.by_user = {{"a", "ns/a"}, {"b", "ns/b"}};
  d.installations = {"ns/a", "ns/b"};
  return d;
}

// Steps of rounds in a shared account: the totals follow the connections
// through reconnects, events and silent servers, and never go down.
// Operator mode: each installation is its derived account, the key the
// operator pushes and the authorizer places users in.
TEST(OperatorModeUsageDirectoryOf, EachInstallationIsItsDerivedAccount) {
  auto signing = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value();
  Directory callout;
  for (const char* name : {"a", "b"}) {
    CredentialState state;
    state.current.username = std::string(name) + "-user";
    callout.Add(switchboard::testing::DirectoryEntryOf("ns", name, "hatchet." + std::string(name),
                                                       std::move(state)));
  }
  auto d = OperatorModeUsageDirectoryOf(callout, signing,
                                        {{"ns/a", {.max_connections = 5}}, {"ns/b", {}}});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->isolation, Isolation::kAccounts);
  EXPECT_EQ(d->installations, (std::set<std::string, std::less<>>{"ns/a", "ns/b"}));
  const std::string a = InstallationAccountKey(signing, "ns", "a").value().public_key();
  const std::string b = InstallationAccountKey(signing, "ns", "b").value().public_key();
  ASSERT_NE(a, b);
  ASSERT_NE(InstallationOf(*d, a, "a-user#0"), nullptr);
  EXPECT_EQ(*InstallationOf(*d, a, "a-user#0"), "ns/a");
  ASSERT_NE(InstallationOf(*d, b, ""), nullptr);
  EXPECT_EQ(*InstallationOf(*d, b, ""), "ns/b");
  // The user name says nothing here: another account's connection is not
  // a's, whatever its user.
  EXPECT_EQ(InstallationOf(*d, "$G", "a-user"), nullptr);
  EXPECT_EQ(InstallationOf(*d, "ns/a", "a-user"), nullptr);
  // Only limits that exist are kept.
  ASSERT_EQ(d->limits.size(), 1u);
  EXPECT_EQ(d->limits.at("ns/a").max_connections, 5);
  // Another signing key: other accounts.
  auto other = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value();
  auto d2 = OperatorModeUsageDirectoryOf(callout, other, {});
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(InstallationOf(*d2, a, ""), nullptr);
}

// The cache gives the derivation's keys, keeps what was asked for since
// the last Retain, and drops what a directory no longer has.
TEST(InstallationAccountCache, RemembersOnlyWhatIsStillAskedFor) {
  auto signing = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value();
  auto other = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value();
  Directory callout;
  for (const char* name : {"a", "b"}) {
    CredentialState state;
    state.current.username = std::string(name) + "-user";
    callout.Add(switchboard::testing::DirectoryEntryOf("ns", name, "hatchet." + std::string(name),
                                                       std::move(state)));
  }
  InstallationAccountCache cache;
  auto d = OperatorModeUsageDirectoryOf(callout, signing, {}, &cache);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->by_account, OperatorModeUsageDirectoryOf(callout, signing, {}).value().by_account);
  EXPECT_EQ(cache.size(), 2u);
  ASSERT_TRUE(cache.Of(other, "ns", "a").ok());
  EXPECT_EQ(cache.Of(other, "ns", "a").value(),
            InstallationAccountKey(other, "ns", "a").value().public_key());
  cache.Retain({signing.public_key(), other.public_key()});
  EXPECT_EQ(cache.size(), 3u);
  // b is gone from the directory; the other signing key is no server's now.
  callout.by_user.erase("b-user");
  ASSERT_TRUE(OperatorModeUsageDirectoryOf(callout, signing, {}, &cache).ok());
  cache.Retain({signing.public_key()});
  EXPECT_EQ(cache.size(), 1u);
}

TEST(UsageLedger, SharedAccountTotalsSurviveReconnects) {
  struct Step {
    const char* what;
    UsageRound round;
    UsageKey key;
    ServerUsage want;
  };
  const Traffic t10{10, 20, 100, 200}, t15{15, 30, 150, 300}, t1{1, 1, 1, 1};
  const UsageKey a0{"ns/a", "name-S0"};
  const std::vector<Step> steps = {
      {"two connections of a, one of b; a stranger is nobody's",
       {{"S0"},
        {Conn("S0", 1, "a", 2, t10), Conn("S0", 2, "a", 5, t10), Conn("S0", 3, "b", 1, t1),
         Conn("S0", 4, "stranger", 9, t10)},
        {},
        {}},
       a0,
       {2, 7, 5, {20, 40, 200, 400}, 0}},
      {"cid 1 closes with an event (final counters), cid 2 grows",
       {{"S0"}, {Conn("S0", 2, "a", 5, t15)}, {Closed("S0", 1, "a", t15, true)}, {}},
       a0,
       {1, 5, 5, {30, 60, 300, 600}, 1}},
      {"cid 2 is gone without an event: its last sample counts",
       {{"S0"}, {Conn("S0", 7, "a", 1, t1)}, {}, {}},
       a0,
       {1, 1, 1, {31, 61, 301, 601}, 1}},
      {"its event comes a round late: only what the sample missed is added",
       {{"S0"}, {Conn("S0", 7, "a", 1, t1)}, {Closed("S0", 2, "a", {16, 30, 160, 300})}, {}},
       a0,
       {1, 1, 1, {32, 61, 311, 601}, 1}},
      {"the server does not answer: the figures stay",
       {{}, {}, {}, {}},
       a0,
       {1, 1, 1, {32, 61, 311, 601}, 1}},
      {"an event for a connection still sampled: the event wins, counted once",
       {{"S0"}, {Conn("S0", 7, "a", 1, t1)}, {Closed("S0", 7, "a", {2, 2, 2, 2})}, {}},
       a0,
       {0, 0, 0, {33, 62, 312, 602}, 1}},
  };
  UsageLedger ledger;
  for (const Step& s : steps) {
    ledger.Round(Shared(), s.round);
    auto it = ledger.usage().find(s.key);
    ASSERT_NE(it, ledger.usage().end()) << s.what;
    EXPECT_EQ(it->second, s.want) << s.what;
  }
  EXPECT_EQ(ledger.usage().size(), 2u) << "a and b on S0, nobody for the stranger";
}

TEST(UsageLedger, ServersAreSeparateSeriesAndConnectionsAddUp) {
  UsageLedger ledger;
  ledger.Round(Shared(), {{"S0", "S1"},
                          {Conn("S0", 1, "a", 1, {}), Conn("S1", 1, "a", 1, {}),
                           Conn("S1", 2, "a", 1, {}), Conn("S1", 3, "b", 1, {})},
                          {},
                          {}});
  EXPECT_EQ(ledger.usage().at({"ns/a", "name-S0"}).connections, 1);
  EXPECT_EQ(ledger.usage().at({"ns/a", "name-S1"}).connections, 2);
  EXPECT_EQ(ledger.Connections("ns/a"), 3);
  EXPECT_EQ(ledger.Connections("ns/b"), 1);
  EXPECT_EQ(ledger.Connections("ns/c"), 0);
}

TEST(UsageLedger, ADeletedInstallationLeavesNothing) {
  UsageLedger ledger;
  ledger.Round(Shared(), {{"S0"}, {Conn("S0", 1, "a", 1, {1, 1, 1, 1})}, {}, {}});
  UsageDirectory without_a = Shared();
  without_a.by_user.erase("a");
  without_a.installations.erase("ns/a");
  ledger.Round(without_a, {{"S0"}, {}, {}, {}});
  EXPECT_TRUE(ledger.usage().empty());
  // Back under the same name: the totals start again.
  ledger.Round(Shared(), {{"S0"}, {Conn("S0", 2, "a", 1, {1, 1, 1, 1})}, {}, {}});
  EXPECT_EQ(ledger.usage().at({"ns/a", "name-S0"}).traffic, (Traffic{1, 1, 1, 1}));
}

TEST(UsageLedger, AccountsTakeTrafficFromStatz) {
  UsageDirectory d;
  d.isolation = Isolation::kAccounts;
  d.by_account = {{"ns/a", "ns/a"}};
  d.installations = {"ns/a"};
  auto stat = [](int64_t conns, Traffic t, int64_t slow) {
    return AccountStat{"S0", "name-S0", "ns/a", conns, t, slow};
  };
  UsageLedger ledger;
  const UsageKey a0{"ns/a", "name-S0"};
  ledger.Round(
      d, {{"S0"},
          {Conn("S0", 1, "u", 3, {9, 9, 9, 9}, "ns/a"), Conn("S0", 2, "u", 4, {9, 9, 9, 9}, "ns/a"),
           Conn("S0", 3, "u", 4, {9, 9, 9, 9}, "$G")},
          {},
          {stat(2, {5, 6, 7, 8}, 1)}});
  EXPECT_EQ(ledger.usage().at(a0), (ServerUsage{2, 7, 4, {5, 6, 7, 8}, 1}));
  // No connection left: the server no longer reports the account; its
  // totals stay.
  ledger.Round(d, {{"S0"}, {}, {Closed("S0", 1, "u", {1, 1, 1, 1}, true, "ns/a")}, {}});
  EXPECT_EQ(ledger.usage().at(a0), (ServerUsage{0, 0, 0, {5, 6, 7, 8}, 1}));
}

TEST(CounterIncrement, FollowsResets) {
  struct Case {
    int64_t last, now, want;
  };
  const Case cases[] = {{0, 0, 0}, {0, 5, 5}, {5, 7, 2}, {7, 3, 3}, {7, -1, 0}};
  for (const auto& c : cases) {
    EXPECT_EQ(CounterIncrement(c.last, c.now), c.want) << c.last << "->" << c.now;
  }
}

TEST(ShouldWriteConnections, OnlyOnChangeAtMostOnceAMinute) {
  using std::chrono::seconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  struct Case {
    const char* name;
    std::optional<int64_t> stored;
    int64_t now_count;
    std::optional<std::chrono::steady_clock::time_point> last;
    bool want;
  };
  const Case cases[] = {
      {"never written, none stored", std::nullopt, 0, std::nullopt, true},
      {"unchanged", 3, 3, std::nullopt, false},
      {"changed, never written by this process", 3, 4, std::nullopt, true},
      {"changed, written 10 s ago", 3, 4, t0 - seconds(10), false},
      {"changed, written a minute ago", 3, 4, t0 - kConnectionsStatusInterval, true},
      {"unchanged, written long ago", 4, 4, t0 - seconds(3600), false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ShouldWriteConnections(c.stored, c.now_count, c.last, t0), c.want) << c.name;
  }
}

// Syntactically valid bcrypt (no password behind it).
std::string FakeHash(char c) { return "$2b$11$" + std::string(53, c); }

RenderInput TwoInstallations(Isolation isolation) {
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.isolation = isolation;
  in.installations = {
      {"team-a", "hatchet", "hatchet.team-a", {{"team-a-hatchet", FakeHash('a')}}},
      {"team-b", "hatchet", "hatchet.team-b", {{"team-b-hatchet", FakeHash('b')}}},
  };
  return in;
}

// spec.usage.systemUser: the system account with its one user closes the
// file, in both isolations and with no installation, within
// SystemUserBytes.
TEST(AddSystemUser, ClosesTheFileInEveryShape) {
  const std::string sys = FakeHash('s');
  const std::string lines = "  \"SYS\": {users: [{user: \"switchboard-system\", password: \"" +
                            sys + "\"}]}\n}\nsystem_account: \"SYS\"\n";
  struct Case {
    const char* name;
    Isolation isolation;
    bool installations;
    std::string want_end;
  };
  const Case cases[] = {
      {"Permissions", Isolation::kPermissions, true, "  ]\n}\naccounts {\n" + lines},
      {"Accounts", Isolation::kAccounts, true, "    ]\n  }\n" + lines},
      {"no installation", Isolation::kAccounts, false, "  ]\n}\naccounts {\n" + lines},
  };
  for (const auto& c : cases) {
    RenderInput in = TwoInstallations(c.isolation);
    if (!c.installations) in.installations.clear();
    auto r = RenderNatsConfig(in);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().ToString();
    const size_t before = r->text.size();
    ASSERT_TRUE(AddSystemUser(*r, c.isolation, sys).ok()) << c.name;
    ASSERT_GE(r->text.size(), c.want_end.size()) << c.name;
    EXPECT_EQ(r->text.substr(r->text.size() - c.want_end.size()), c.want_end) << c.name;
    EXPECT_LE(r->text.size() - before, SystemUserBytes(sys)) << c.name;
    EXPECT_EQ(r->hash, ConfigHash(r->text)) << c.name;
  }
  auto r = RenderNatsConfig(TwoInstallations(Isolation::kPermissions));
  ASSERT_TRUE(r.ok());
  const std::string before = r->text;
  Status s = AddSystemUser(*r, Isolation::kPermissions, "plaintext");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find("plaintext"), std::string::npos) << "never echoed";
  EXPECT_EQ(r->text, before);
  RenderedConfig odd;
  odd.text = "not a rendered file";
  EXPECT_FALSE(AddSystemUser(odd, Isolation::kPermissions, FakeHash('s')).ok());
}

TEST(AddSystemUser, TheSystemUsersNameIsNoInstallations) {
  RenderInput in = TwoInstallations(Isolation::kPermissions);
  in.installations[0].users[0].username = "switchboard-system";
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->installations, 1);
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].field, "spec.nats.credentials.username");
}

TEST(UsageSystemUserOf, ReadsTheSpec) {
  EXPECT_FALSE(UsageSystemUserOf(json::object()));
  EXPECT_FALSE(UsageSystemUserOf({{"spec", {{"usage", nullptr}}}}));
  EXPECT_FALSE(UsageSystemUserOf({{"spec", {{"usage", {{"systemUser", "true"}}}}}}));
  EXPECT_FALSE(UsageSystemUserOf({{"spec", {{"usage", {{"systemUser", false}}}}}}));
  EXPECT_TRUE(UsageSystemUserOf({{"spec", {{"usage", {{"systemUser", true}}}}}}));
}

TEST(PlanUsageSystemSecret, KeepsWhatIsStoredAndGeneratesWhatIsNot) {
  auto fresh = PlanUsageSystemSecret(std::nullopt);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_TRUE(fresh->changed);
  EXPECT_TRUE(IsBcryptHash(fresh->bcrypt));
  auto ok = BcryptVerify(fresh->data.at("password"), fresh->bcrypt);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(*ok);
  auto kept = PlanUsageSystemSecret(fresh->data);
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(kept->changed);
  EXPECT_EQ(kept->data, fresh->data);
  SecretData broken = fresh->data;
  broken["bcrypt"] = "nope";
  auto again = PlanUsageSystemSecret(broken);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->changed);
  EXPECT_NE(again->data.at("password"), fresh->data.at("password"));
  EXPECT_EQ(UsageSystemSecretName("shared"), "shared-switchboard-system");
}

}  // namespace
}  // namespace switchboard::operator_logic
