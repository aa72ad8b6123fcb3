// EffectiveLimits: the backend's limits over its server's defaults, one row
// per case of the policy (lower, raise allowed or not, none set, the
// server's max_payload as a ceiling).
#include "switchboard/operator_logic/limits.h"

#include <gtest/gtest.h>

#include <optional>

#include "switchboard/api/limits.h"

namespace switchboard::operator_logic {
namespace {

using api::kMiB;
constexpr std::nullopt_t kNone = std::nullopt;

struct Row {
  const char* name;
  InstallationLimits backend;
  InstallationLimits defaults;
  bool raise_allowed;
  int64_t server_max_payload;
  InstallationLimits want;
};

const Row kRows[] = {
    {"nothing set: no limit", {}, {}, false, 16 * kMiB, {}},
    {"backend alone", {10, 500, 16 * kMiB}, {}, false, 16 * kMiB, {10, 500, 16 * kMiB}},
    {"server defaults alone", {}, {100, 1000, kNone}, false, 16 * kMiB, {100, 1000, kNone}},
    {"backend lowers a default",
     {5, kNone, kNone},
     {100, 1000, kNone},
     false,
     16 * kMiB,
     {5, 1000, kNone}},
    {"backend equal to the default",
     {100, kNone, kNone},
     {100, kNone, kNone},
     false,
     16 * kMiB,
     {100, kNone, kNone}},
    {"raise refused: capped at the default",
     {500, 5000, kNone},
     {100, 1000, kNone},
     false,
     16 * kMiB,
     {100, 1000, kNone}},
    {"raise allowed", {500, 5000, kNone}, {100, 1000, kNone}, true, 16 * kMiB, {500, 5000, kNone}},
    {"a backend limit with no default is never a raise",
     {500, kNone, kNone},
     {kNone, 1000, kNone},
     false,
     16 * kMiB,
     {500, 1000, kNone}},
    {"maxPayload lowered",
     {kNone, kNone, 16 * kMiB},
     {kNone, kNone, 32 * kMiB},
     false,
     64 * kMiB,
     {kNone, kNone, 16 * kMiB}},
    {"maxPayload raise refused",
     {kNone, kNone, 48 * kMiB},
     {kNone, kNone, 32 * kMiB},
     false,
     64 * kMiB,
     {kNone, kNone, 32 * kMiB}},
    {"maxPayload above the server's: the client gets the server's",
     {kNone, kNone, 64 * kMiB},
     {},
     false,
     16 * kMiB,
     {kNone, kNone, 16 * kMiB}},
    {"a raise allowed still stops at the server's maxPayload",
     {kNone, kNone, 64 * kMiB},
     {kNone, kNone, 16 * kMiB},
     true,
     32 * kMiB,
     {kNone, kNone, 32 * kMiB}},
};

TEST(EffectiveLimits, Table) {
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    LimitsPolicy p{r.defaults, r.raise_allowed, r.server_max_payload};
    EXPECT_EQ(EffectiveLimits(r.backend, p), r.want);
  }
}

TEST(EffectiveLimits, PolicyAndBackendFromTheObjects) {
  nlohmann::json server = {
      {"kind", "NatsServer"},
      {"metadata", {{"name", "shared"}, {"namespace", "nats"}}},
      {"spec",
       {{"maxPayload", "32Mi"},
        {"isolation", "Accounts"},
        {"installationLimits",
         {{"maxConnections", 20}, {"maxPayload", 16777216}, {"overrides", "LowerOrRaise"}}}}}};
  nlohmann::json backend = {
      {"kind", "PubSubBackend"},
      {"spec", {{"kind", "nats"}, {"nats", {{"limits", {{"maxPayload", "24Mi"}}}}}}}};
  LimitsPolicy p = LimitsPolicyOf(api::NatsServerView(server));
  EXPECT_EQ(p.defaults, (InstallationLimits{20, kNone, 16 * kMiB}));
  EXPECT_TRUE(p.raise_allowed);
  EXPECT_EQ(p.server_max_payload, 32 * kMiB);
  EXPECT_EQ(EffectiveLimits(api::BackendView(backend).limits(), p),
            (InstallationLimits{20, kNone, 24 * kMiB}));
  // overrides absent: LowerOnly.
  server["spec"]["installationLimits"].erase("overrides");
  EXPECT_FALSE(LimitsPolicyOf(api::NatsServerView(server)).raise_allowed);
}

// Only a server with an account per installation applies limits.
TEST(EffectiveLimits, OnlyWithAccountsIsolation) {
  nlohmann::json server = {
      {"kind", "NatsServer"},
      {"spec", {{"isolation", "Accounts"}, {"installationLimits", {{"maxConnections", 20}}}}}};
  nlohmann::json backend = {
      {"kind", "PubSubBackend"},
      {"spec", {{"kind", "nats"}, {"nats", {{"limits", {{"maxSubscriptions", 9}}}}}}}};
  EXPECT_EQ(InstallationLimitsOf(api::BackendView(backend), api::NatsServerView(server)),
            (InstallationLimits{20, 9, kNone}));
  for (const char* isolation : {"Permissions", ""}) {
    server["spec"]["isolation"] = isolation;
    EXPECT_TRUE(
        InstallationLimitsOf(api::BackendView(backend), api::NatsServerView(server)).empty())
        << isolation;
  }
}

TEST(EffectiveLimits, StatusShowsOnlyWhatApplies) {
  EXPECT_TRUE(LimitsStatus({}).is_null());
  EXPECT_EQ(LimitsStatus({10, kNone, 16 * kMiB}),
            (nlohmann::json{{"maxConnections", 10}, {"maxPayload", 16777216}}));
  EXPECT_EQ(LimitsStatus({kNone, 7, kNone}), (nlohmann::json{{"maxSubscriptions", 7}}));
}

}  // namespace
}  // namespace switchboard::operator_logic
