// Installation limits: PubSubBackend spec.nats.limits and NatsServer
// spec.installationLimits, alone and against each other. One row per rule
// and edge, each with the exact finding (rule, field, message) it expects:
// these messages are what a user reads in kubectl, the CLI and status.
#include <gtest/gtest.h>

#include <optional>

#include "switchboard/rules/validate.h"
#include "test_objects.h"

namespace switchboard::rules {
namespace {

using nlohmann::json;
using testing::Backend;
using testing::Server;

json AccountsServer(json limits = nullptr) {
  json s = Server();
  s["spec"]["isolation"] = "Accounts";
  if (!limits.is_null()) s["spec"]["installationLimits"] = std::move(limits);
  return s;
}

json WithLimits(json limits) {
  json b = Backend();
  b["spec"]["nats"]["limits"] = std::move(limits);
  return b;
}

struct Expected {
  bool error;  // an error (reject), else a warning
  std::string rule, field, message;
};

struct Case {
  const char* name;
  json object;
  std::optional<json> server;  // the context's NatsServer nats/shared, when any
  std::vector<Expected> want;  // every finding, in order (errors first)
};

const std::string kPermissionsWhy =
    "with isolation: Permissions every installation's user is in one shared account, and NATS "
    "enforces connection and subscription limits per account, not per user, so these limits "
    "would not be enforced: set spec.isolation: Accounts on the NatsServer for an account per "
    "installation (with AuthCallout that runs NATS in operator mode, accounts pushed live with "
    "no reload), or remove the limits";
const std::string kCalloutWhy =
    "in AuthCallout mode with isolation: Permissions every installation's user lands in one "
    "shared account, and NATS does not apply the limits of a user JWT an auth callout returns "
    "(only its permissions), so these limits would not be enforced: set spec.isolation: "
    "Accounts on the NatsServer for an account per installation (with AuthCallout that runs "
    "NATS in operator mode, accounts pushed live with no reload), or remove the limits";

json CalloutServer() {
  json s = Server();
  s["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  return s;
}

std::vector<Case> Cases() {
  const json full = {{"maxConnections", 10}, {"maxSubscriptions", 500}, {"maxPayload", "16Mi"}};
  return {
      {"backend limits on an Accounts server", WithLimits(full), AccountsServer(), {}},
      {"backend limits, server not known (GitOps order): judged once it exists",
       WithLimits(full),
       std::nullopt,
       {{false, "server-not-found", "spec.nats.serverRef",
         "NatsServer nats/shared does not exist (yet); the backend stays Ready=False "
         "(ServerNotFound) until it is created: check the name and namespace"}}},
      {"maxConnections 0",
       WithLimits({{"maxConnections", 0}}),
       AccountsServer(),
       {{true, "installation-limits", "spec.nats.limits.maxConnections",
         "is 0, below 1; set 1 to 1000000 connections (of the installation, across the cluster), "
         "or remove the field for no limit"}}},
      {"maxConnections above the bound",
       WithLimits({{"maxConnections", 1000001}}),
       AccountsServer(),
       {{true, "installation-limits", "spec.nats.limits.maxConnections",
         "is 1000001, above 1000000; set 1 to 1000000 connections (of the installation, across "
         "the cluster), or remove the field for no limit"}}},
      {"maxSubscriptions negative",
       WithLimits({{"maxSubscriptions", -5}}),
       AccountsServer(),
       {{true, "installation-limits", "spec.nats.limits.maxSubscriptions",
         "is -5, below 1; set 1 to 1000000 subscriptions (per connection; Hatchet's engine "
         "subscribes once per tenant), or remove the field for no limit"}}},
      {"maxPayload below 16Mi (Hatchet's engine would not start)",
       WithLimits({{"maxPayload", "8Mi"}}),
       AccountsServer(),
       {{true, "installation-limits", "spec.nats.limits.maxPayload",
         "is 8Mi (8388608 bytes), below 16Mi; Hatchet's engine refuses to start on a server "
         "whose max_payload is under 16Mi: set at least 16Mi"}}},
      {"maxPayload above 64Mi",
       WithLimits({{"maxPayload", 67108865}}),
       AccountsServer(),
       {{true, "installation-limits", "spec.nats.limits.maxPayload",
         "is 67108865 (67108865 bytes), above NATS's hard limit of 64Mi; set 16Mi to 64Mi"}}},
      {"maxPayload not a quantity",
       WithLimits({{"maxPayload", "16MB"}}),
       AccountsServer(),
       {{true, "quantity", "spec.nats.limits.maxPayload",
         "\"16MB\" is not an accepted size; write bytes (16777216) or a number with Ki, Mi, Gi, "
         "k, M or G (16Mi)"}}},
      {"maxConnections as a string",
       WithLimits({{"maxConnections", "10"}}),
       AccountsServer(),
       {{true, "type", "spec.nats.limits.maxConnections",
         "must be an integer, not a string; write the number without quotes"}}},
      {"unknown field under limits",
       WithLimits({{"maxConnection", 3}}),
       AccountsServer(),
       {{true, "unknown-field", "spec.nats.limits.maxConnection",
         "unknown field; did you mean \"maxConnections\"? (the API server rejects or drops "
         "unknown fields)"}}},
      {"backend limits on a Permissions server",
       WithLimits({{"maxConnections", 10}}),
       Server(),
       {{true, "installation-limits", "spec.nats.limits",
         "NatsServer nats/shared has isolation: Permissions; " + kPermissionsWhy}}},
      {"backend limits on an AuthCallout server",
       WithLimits({{"maxSubscriptions", 100}}),
       CalloutServer(),
       {{true, "installation-limits", "spec.nats.limits",
         "NatsServer nats/shared has isolation: Permissions and provisioning.mode: AuthCallout; " +
             kCalloutWhy}}},
      {"an empty limits block is no limit", WithLimits(json::object()), Server(), {}},
      {"lowering the server's defaults",
       WithLimits({{"maxConnections", 5}, {"maxSubscriptions", 100}}),
       AccountsServer({{"maxConnections", 10}, {"maxSubscriptions", 100}}),
       {}},
      {"raising a default the server lets only lower",
       WithLimits({{"maxConnections", 50}}),
       AccountsServer({{"maxConnections", 10}}),
       {{true, "installation-limits", "spec.nats.limits.maxConnections",
         "is 50, above NatsServer nats/shared's default spec.installationLimits.maxConnections "
         "(10), and that server lets backends only lower its defaults "
         "(spec.installationLimits.overrides: LowerOnly); set at most 10, remove the field for "
         "the server's default, or have the server set spec.installationLimits.overrides: "
         "LowerOrRaise"}}},
      {"raising maxPayload the server lets only lower",
       WithLimits({{"maxPayload", "32Mi"}}),
       [] {
         json s = AccountsServer({{"maxPayload", "16Mi"}});
         s["spec"]["maxPayload"] = "64Mi";
         return s;
       }(),
       {{true, "installation-limits", "spec.nats.limits.maxPayload",
         "is 33554432, above NatsServer nats/shared's default spec.installationLimits.maxPayload "
         "(16777216), and that server lets backends only lower its defaults "
         "(spec.installationLimits.overrides: LowerOnly); set at most 16777216, remove the field "
         "for the server's default, or have the server set spec.installationLimits.overrides: "
         "LowerOrRaise"}}},
      {"raising with overrides: LowerOrRaise",
       WithLimits({{"maxConnections", 50}}),
       AccountsServer({{"maxConnections", 10}, {"overrides", "LowerOrRaise"}}),
       {}},
      {"maxPayload above the server's max_payload is said, not refused",
       WithLimits({{"maxPayload", "32Mi"}}),
       AccountsServer(),
       {{false, "installation-limits", "spec.nats.limits.maxPayload",
         "is 32Mi, above NatsServer nats/shared's spec.maxPayload (16Mi): a client gets the "
         "smaller, 16Mi (status.limits.maxPayload shows it); lower it or remove it"}}},
      // --- the NatsServer's defaults
      {"server defaults with Accounts",
       AccountsServer(
           {{"maxConnections", 100}, {"maxSubscriptions", 1000}, {"maxPayload", 16777216}}),
       std::nullopt,
       {}},
      {"server defaults with Permissions",
       [] {
         json s = Server();
         s["spec"]["installationLimits"] = {{"maxConnections", 100}};
         return s;
       }(),
       std::nullopt,
       {{true, "installation-limits", "spec.installationLimits",
         "needs isolation: Accounts: " + kPermissionsWhy}}},
      {"server overrides alone with Permissions (no limit set)",
       [] {
         json s = Server();
         s["spec"]["installationLimits"] = {{"overrides", "LowerOrRaise"}};
         return s;
       }(),
       std::nullopt,
       {}},
      {"server overrides unknown",
       AccountsServer({{"overrides", "Raise"}}),
       std::nullopt,
       {{true, "installation-limits", "spec.installationLimits.overrides",
         "\"Raise\" is not an overrides policy; use LowerOnly or LowerOrRaise"}}},
      {"server default maxPayload above its maxPayload",
       AccountsServer({{"maxPayload", "32Mi"}}),
       std::nullopt,
       {{true, "installation-limits", "spec.installationLimits.maxPayload",
         "is 32Mi (33554432 bytes), more than spec.maxPayload 16Mi (16777216 bytes); a client "
         "gets the smaller of the two: lower installationLimits.maxPayload or raise "
         "spec.maxPayload"}}},
      {"server default maxPayload below 16Mi",
       AccountsServer({{"maxPayload", "1Mi"}}),
       std::nullopt,
       {{true, "installation-limits", "spec.installationLimits.maxPayload",
         "is 1Mi (1048576 bytes), below 16Mi; Hatchet's engine refuses to start on a server "
         "whose max_payload is under 16Mi: set at least 16Mi"}}},
      {"server default maxSubscriptions 0",
       AccountsServer({{"maxSubscriptions", 0}}),
       std::nullopt,
       {{true, "installation-limits", "spec.installationLimits.maxSubscriptions",
         "is 0, below 1; set 1 to 1000000 subscriptions (per connection; Hatchet's engine "
         "subscribes once per tenant), or remove the field for no limit"}}},
  };
}

std::string Dump(const Report& r) {
  std::string s;
  for (const auto& f : r.errors) s += "  error: " + f.ToString() + " [" + f.rule + "]\n";
  for (const auto& f : r.warnings) s += "  warning: " + f.ToString() + " [" + f.rule + "]\n";
  return s;
}

TEST(LimitsRules, Table) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Context ctx;
    if (c.server) ctx.servers.push_back(*c.server);
    Report r = Validate(c.object, ctx);
    std::vector<Expected> got;
    for (const auto& f : r.errors) got.push_back({true, f.rule, f.field, f.message});
    for (const auto& f : r.warnings) got.push_back({false, f.rule, f.field, f.message});
    ASSERT_EQ(got.size(), c.want.size()) << Dump(r);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].error, c.want[i].error) << Dump(r);
      EXPECT_EQ(got[i].rule, c.want[i].rule);
      EXPECT_EQ(got[i].field, c.want[i].field);
      EXPECT_EQ(got[i].message, c.want[i].message);
    }
  }
}

// A NatsServer whose isolation is Permissions while backends bound to it
// set limits: admitted (the server's owner decides), with a warning naming
// them; the backends themselves are refused (above).
TEST(LimitsRules, PermissionsServerWarnsAboutBackendsWithLimits) {
  Context ctx;
  ctx.backends.push_back(WithLimits({{"maxConnections", 3}}));
  ctx.backends.push_back(Backend("team-b", "plain", "hatchet.team-b"));
  Report r = Validate(Server(), ctx);
  ASSERT_TRUE(r.ok()) << Dump(r);
  ASSERT_EQ(r.warnings.size(), 1u) << Dump(r);
  EXPECT_EQ(r.warnings[0].rule, "installation-limits");
  EXPECT_EQ(r.warnings[0].field, "spec.isolation");
  EXPECT_EQ(r.warnings[0].message,
            "PubSubBackend team-a/hatchet set spec.nats.limits, which need isolation: Accounts; "
            "with Permissions they are refused (Ready=False, InvalidSpec) and their engines keep "
            "connecting without limits: set isolation: Accounts, or remove their limits");
  // With Accounts, nothing to say.
  EXPECT_TRUE(Validate(AccountsServer(), ctx).warnings.empty());
}

// Defaulting fills overrides only where the block is written, as the CRD.
TEST(LimitsRules, OverridesDefaultsToLowerOnly) {
  json d = DefaultedCopy(AccountsServer({{"maxConnections", 3}}));
  EXPECT_EQ(d["spec"]["installationLimits"]["overrides"], "LowerOnly");
  EXPECT_FALSE(DefaultedCopy(Server())["spec"].contains("installationLimits"));
}

}  // namespace
}  // namespace switchboard::rules
