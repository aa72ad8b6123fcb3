// DefaultedCopy fills docs/api.md's defaults; DefaultingPatch is the RFC 6902
// patch that produces exactly that copy.
#include <gtest/gtest.h>

#include "switchboard/rules/validate.h"
#include "test_objects.h"

namespace switchboard::rules {
namespace {

using nlohmann::json;
using testing::Backend;
using testing::Server;

json Bare(const std::string& kind, json spec) {
  return {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
          {"kind", kind},
          {"metadata", {{"name", "hatchet"}, {"namespace", "team-a"}}},
          {"spec", spec}};
}

TEST(Defaults, NatsBackend) {
  json d = DefaultedCopy(
      Bare("PubSubBackend", {{"kind", "nats"}, {"nats", {{"serverRef", {{"name", "shared"}}}}}}));
  EXPECT_EQ(d["spec"]["nats"]["serverRef"]["namespace"], "team-a");
  EXPECT_EQ(d["spec"]["nats"]["subjectPrefix"], "hatchet.pubsub");
  EXPECT_EQ(d["spec"]["nats"]["credentials"]["username"], "team-a-hatchet");
  EXPECT_EQ(d["spec"]["nats"]["credentials"]["rotationGracePeriod"], "10m");
  EXPECT_EQ(d["spec"]["output"]["secretName"], "hatchet-pubsub-env");
  EXPECT_FALSE(d["spec"].contains("rabbitmq"));
  EXPECT_FALSE(d["spec"].contains("postgres"));
}

TEST(Defaults, RabbitmqAndPostgres) {
  json r = DefaultedCopy(Bare(
      "PubSubBackend",
      {{"kind", "rabbitmq"}, {"rabbitmq", {{"urlSecretRef", {{"name", "x"}, {"key", "url"}}}}}}));
  EXPECT_EQ(r["spec"]["rabbitmq"]["maxPubChans"], 10);
  EXPECT_EQ(r["spec"]["rabbitmq"]["maxSubChans"], 20);
  json r2 = DefaultedCopy(Bare(
      "PubSubBackend", {{"kind", "rabbitmq"}, {"rabbitmq", {{"urlSecretRef", {{"name", "x"}}}}}}));
  EXPECT_EQ(r2["spec"]["rabbitmq"]["urlSecretRef"]["key"], "url");
  json n = DefaultedCopy(
      Bare("PubSubBackend", {{"kind", "nats"},
                             {"nats",
                              {{"serverRef", {{"name", "s"}}},
                               {"credentials", {{"passwordSecretRef", {{"name", "pw"}}}}}}}}));
  EXPECT_EQ(n["spec"]["nats"]["credentials"]["passwordSecretRef"]["key"], "password");
  json p =
      DefaultedCopy(Bare("PubSubBackend", {{"kind", "postgres"}, {"postgres", json::object()}}));
  EXPECT_EQ(p["spec"]["postgres"]["maxConns"], 5);
  EXPECT_EQ(p["spec"]["postgres"]["minConns"], 1);
}

TEST(Defaults, Server) {
  json d = DefaultedCopy(
      Bare("NatsServer", {{"url", "nats://a:4222"}, {"tls", {{"caSecretRef", {{"name", "ca"}}}}}}));
  EXPECT_EQ(d["spec"]["maxPayload"], "16Mi");
  EXPECT_EQ(d["spec"]["isolation"], "Permissions");
  EXPECT_EQ(d["spec"]["config"]["secretName"], "hatchet-switchboard");
  EXPECT_EQ(d["spec"]["config"]["key"], "switchboard.conf");
  EXPECT_EQ(d["spec"]["tls"]["caSecretRef"]["key"], "ca.crt");
  EXPECT_EQ(d["spec"]["allowedNamespaces"]["from"], "Same");
  EXPECT_FALSE(d["spec"].contains("maxPending"));  // optional, no default
  EXPECT_EQ(d["spec"]["provisioning"], json({{"mode", "IncludeFile"}}));
}

// authCallout is filled only when written: a block the defaults added would
// stay behind when the server goes back to IncludeFile, where it is refused.
TEST(Defaults, ServerAuthCallout) {
  json d = DefaultedCopy(
      Bare("NatsServer", {{"url", "nats://a"}, {"provisioning", {{"mode", "AuthCallout"}}}}));
  EXPECT_EQ(d["spec"]["provisioning"], json({{"mode", "AuthCallout"}}));
  d = DefaultedCopy(
      Bare("NatsServer",
           {{"url", "nats://a"},
            {"provisioning", {{"mode", "AuthCallout"}, {"authCallout", json::object()}}}}));
  EXPECT_EQ(d["spec"]["provisioning"]["authCallout"],
            json({{"account", "HATCHET"}, {"secretName", "hatchet-auth-callout"}}));
  EXPECT_TRUE(Validate(d, Context{}).ok());
}

TEST(Defaults, PresentValuesAreKeptEvenWhenWrong) {
  json o = Bare("PubSubBackend",
                {{"kind", "postgres"}, {"postgres", {{"maxConns", "five"}, {"minConns", 0}}}});
  json d = DefaultedCopy(o);
  EXPECT_EQ(d["spec"]["postgres"]["maxConns"], "five");
  EXPECT_EQ(d["spec"]["postgres"]["minConns"], 0);
}

TEST(Defaults, NullIsReplaced) {
  json o = Bare("NatsServer", {{"url", "nats://a"}, {"maxPayload", nullptr}});
  EXPECT_EQ(DefaultedCopy(o)["spec"]["maxPayload"], "16Mi");
  json patch = DefaultingPatch(o);
  bool replace = false;
  for (const auto& op : patch) replace |= op["op"] == "replace" && op["path"] == "/spec/maxPayload";
  EXPECT_TRUE(replace) << patch.dump();
}

TEST(Defaults, NamespaceDerivedDefaultsNeedANamespace) {
  json o = Bare("PubSubBackend", {{"kind", "nats"}, {"nats", {{"serverRef", {{"name", "s"}}}}}});
  o["metadata"].erase("namespace");
  json d = DefaultedCopy(o);
  EXPECT_FALSE(d["spec"]["nats"]["serverRef"].contains("namespace"));
  EXPECT_FALSE(d["spec"]["nats"]["credentials"].contains("username"));
  json d2 = DefaultedCopy(o, "team-x");
  EXPECT_EQ(d2["spec"]["nats"]["serverRef"]["namespace"], "team-x");
  EXPECT_EQ(d2["spec"]["nats"]["credentials"]["username"], "team-x-hatchet");
  EXPECT_EQ(o.patch(DefaultingPatch(o, "team-x")), d2);
}

TEST(Defaults, FullyDefaultedObjectNeedsNoPatch) {
  json d = DefaultedCopy(Backend());
  EXPECT_EQ(DefaultingPatch(d), json::array());
  EXPECT_EQ(DefaultedCopy(d), d);  // idempotent
}

TEST(Defaults, PatchCreatesParentsAndAppliesToTheDefaultedCopy) {
  const json cases[] = {
      Bare("PubSubBackend", {{"kind", "nats"}, {"nats", {{"serverRef", {{"name", "shared"}}}}}}),
      Bare("PubSubBackend", {{"kind", "nats"},
                             {"nats", {{"serverRef", {{"name", "s"}}}, {"credentials", nullptr}}},
                             {"output", json::object()}}),
      Bare("PubSubBackend", {{"kind", "rabbitmq"},
                             {"rabbitmq", {{"urlSecretRef", {{"name", "x"}, {"key", "url"}}}}}}),
      Bare("PubSubBackend", {{"kind", "postgres"}, {"postgres", {{"minConns", 0}}}}),
      Bare("NatsServer", {{"url", "nats://a"}}),
      Bare("NatsServer", json::object()),
      Bare("NatsServer", {{"url", "nats://a"},
                          {"tls", {{"caSecretRef", {{"name", "ca"}}}}},
                          {"config", {{"key", "k"}}}}),
      Bare("NatsServer", {{"url", "nats://a"}, {"weird/key~name", 1}}),
      Bare("NatsServer", {{"url", "nats://a"}, {"provisioning", {{"authCallout", nullptr}}}}),
      Bare("NatsServer",
           {{"url", "nats://a"},
            {"provisioning", {{"mode", "AuthCallout"}, {"authCallout", {{"account", "X"}}}}}}),
      {{"kind", "NatsServer"}, {"metadata", {{"name", "n"}}}},  // no spec at all
      Bare("PubSubBackend", "not an object"),
      Bare("PubSubBackend", {{"kind", 5}}),
  };
  for (const auto& o : cases) {
    json patch = DefaultingPatch(o);
    ASSERT_TRUE(patch.is_array());
    for (const auto& op : patch) {
      EXPECT_TRUE(op["op"] == "add" || op["op"] == "replace") << op.dump();
      EXPECT_EQ(op["path"].get<std::string>().rfind("/spec", 0), 0u) << op.dump();
    }
    EXPECT_EQ(o.patch(patch), DefaultedCopy(o)) << o.dump() << "\npatch: " << patch.dump();
  }
}

TEST(Defaults, ValidationJudgesTheDefaultedObject) {
  // maxConns defaults to 5: minConns 6 is judged against it.
  json o = Bare("PubSubBackend", {{"kind", "postgres"}, {"postgres", {{"minConns", 6}}}});
  EXPECT_FALSE(Validate(o, Context{}).ok());
}

}  // namespace
}  // namespace switchboard::rules
