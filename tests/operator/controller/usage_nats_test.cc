// Per-installation usage against a real nats-server (Debian's), in both
// isolation modes: the system user's CONNZ/STATZ/disconnect events through
// UsageSource, folded by operator_logic::UsageLedger. N engine-like
// connections of one installation show as N connections of that
// installation and of no other, and the counters follow the traffic,
// through a connection closing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/usage.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "usage_nats_checks.h"
#include "usage_source.h"

namespace switchboard::operator_controller {
namespace {

namespace logic = ::switchboard::operator_logic;
using testing::NatsTestClient;
using usage_nats::kWindow;
using usage_nats::Sum;

// What the operator renders for a server with the system user
// (spec.usage.systemUser): installations ns/a (a-user) and ns/b (b-user).
logic::RenderInput Input(logic::Isolation isolation) {
  auto hash = [](const std::string& pw) {
    auto h = logic::BcryptHash(pw, logic::kGeneratedPasswordBcryptCost);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? *h : std::string();
  };
  logic::RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.isolation = isolation;
  in.installations = {
      {"ns", "a", "hatchet.a", {{"a-user", hash("pw-a-user")}}, std::nullopt, {}},
      {"ns", "b", "hatchet.b", {{"b-user", hash("pw-b-user")}}, std::nullopt, {}},
  };
  return in;
}

std::string Rendered(const logic::RenderInput& in) {
  auto r = logic::RenderNatsConfig(in);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return "";
  EXPECT_TRUE(r->rejected.empty());
  auto hash = logic::BcryptHash("sys-pass", logic::kGeneratedPasswordBcryptCost);
  EXPECT_TRUE(hash.ok());
  Status added = logic::AddSystemUser(*r, in.isolation, hash.ok() ? *hash : "");
  EXPECT_TRUE(added.ok()) << added.ToString();
  return r->text;
}

class UsageNatsTest : public testing::NatsLibraryTest,
                      public ::testing::WithParamInterface<logic::Isolation> {};

TEST_P(UsageNatsTest, NConnectionsOfOneInstallationAndTheCountersFollowTraffic) {
  const logic::Isolation isolation = GetParam();
  const bool accounts = isolation == logic::Isolation::kAccounts;
  const logic::RenderInput input = Input(isolation);
  testing::NatsServer server(Rendered(input));
  ASSERT_TRUE(server.ok()) << server.Log();

  constexpr int kN = 3;
  usage_nats::Engines engines;
  ASSERT_NO_FATAL_FAILURE(usage_nats::ConnectEngines(
      std::vector<std::string>(kN, server.url()), "a-user", "pw-a-user", "hatchet.a.t", engines));
  NatsTestClient other(server.url(), "b-user", "pw-b-user");
  ASSERT_TRUE(other.connected()) << other.error();

  pubsub::NatsOptions o;
  o.urls = server.url();
  o.username = "switchboard-system";
  o.password = "sys-pass";
  o.name = "switchboard-operator";
  auto source = UsageSource::Open(o);
  ASSERT_TRUE(source.ok()) << source.status().ToString();

  // Who is who, as the collector derives it from the same input.
  const logic::UsageDirectory directory = logic::UsageDirectoryOf(input);
  logic::UsageLedger ledger;
  auto round = [&] {
    auto r = (*source)->Collect(accounts ? "" : "$G", accounts, kWindow);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) ledger.Round(directory, *r);
  };

  round();
  EXPECT_EQ(ledger.Connections("ns/a"), kN);
  EXPECT_EQ(ledger.Connections("ns/b"), 1);
  EXPECT_EQ(Sum(ledger, "ns/a").subscriptions, kN);
  for (const auto& [key, u] : ledger.usage()) {
    EXPECT_TRUE(key.first == "ns/a" || key.first == "ns/b") << key.first;
  }

  // 10 messages of 5 bytes from one engine reach all three subscribers.
  ASSERT_NO_FATAL_FAILURE(
      usage_nats::ExpectTrafficCounted(engines, "hatchet.a.t", round, ledger, "ns/a", "ns/b"));

  // One engine (the one that published) goes: N-1 connections, and the
  // totals keep what it did.
  ASSERT_NO_FATAL_FAILURE(
      usage_nats::ExpectEngineGoneTotalsKept(engines, 0, round, ledger, "ns/a", "ns/b"));
  EXPECT_EQ(ledger.Connections("ns/a"), kN - 1);
}

INSTANTIATE_TEST_SUITE_P(Isolation, UsageNatsTest,
                         ::testing::Values(logic::Isolation::kPermissions,
                                           logic::Isolation::kAccounts),
                         [](const auto& info) {
                           return std::string(logic::IsolationName(info.param));
                         });

}  // namespace
}  // namespace switchboard::operator_controller
