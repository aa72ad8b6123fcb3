#include "switchboard/api/views.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace switchboard::api {
namespace {

using nlohmann::json;

TEST(Views, BackendDefaults) {
  json o = {{"kind", "PubSubBackend"},
            {"metadata", {{"name", "hatchet"}, {"namespace", "team-a"}}},
            {"spec", {{"kind", "nats"}, {"nats", {{"serverRef", {{"name", "shared"}}}}}}}};
  BackendView v(o);
  EXPECT_EQ(v.kind(), "nats");
  EXPECT_TRUE(v.has_nats());
  EXPECT_EQ(v.server(), (ObjectKey{"team-a", "shared"}));
  EXPECT_EQ(v.subject_prefix(), "hatchet.pubsub");
  EXPECT_EQ(v.username(), "team-a-hatchet");
  EXPECT_FALSE(v.password_secret().has_value());
  EXPECT_EQ(v.credentials_secret_name(), "hatchet-nats-credentials");
  EXPECT_EQ(v.rotation_grace_period(), "10m");
  EXPECT_EQ(v.env_secret_name(), "hatchet-pubsub-env");
  EXPECT_EQ(v.max_pub_chans(), 10);
  EXPECT_EQ(v.max_sub_chans(), 20);
  EXPECT_EQ(v.max_conns(), 5);
  EXPECT_EQ(v.min_conns(), 1);
}

// Bound means: kind nats and a named serverRef (its namespace defaults to
// the backend's). Every other shape is bound to nothing.
TEST(Views, BoundServer) {
  struct Case {
    const char* name;
    json spec;
    std::optional<ObjectKey> want;
  };
  const std::vector<Case> cases = {
      {"nats, same namespace",
       {{"kind", "nats"}, {"nats", {{"serverRef", {{"name", "s"}}}}}},
       ObjectKey{"team-a", "s"}},
      {"nats, other namespace",
       {{"kind", "nats"}, {"nats", {{"serverRef", {{"name", "s"}, {"namespace", "nats"}}}}}},
       ObjectKey{"nats", "s"}},
      {"nats, no serverRef", {{"kind", "nats"}, {"nats", json::object()}}, std::nullopt},
      {"nats, unnamed serverRef",
       {{"kind", "nats"}, {"nats", {{"serverRef", {{"namespace", "nats"}}}}}},
       std::nullopt},
      {"postgres with a stray nats block",
       {{"kind", "postgres"}, {"nats", {{"serverRef", {{"name", "s"}}}}}},
       std::nullopt},
      {"no kind", {{"nats", {{"serverRef", {{"name", "s"}}}}}}, std::nullopt},
  };
  for (const auto& c : cases) {
    json o = {{"metadata", {{"name", "b"}, {"namespace", "team-a"}}}, {"spec", c.spec}};
    EXPECT_EQ(BackendView(o).bound_server(), c.want) << c.name;
  }
}

TEST(Views, BackendExplicitValues) {
  json o = {{"metadata", {{"name", "h"}, {"namespace", "a"}}},
            {"spec",
             {{"kind", "nats"},
              {"nats",
               {{"serverRef", {{"name", "s"}, {"namespace", "nats"}}},
                {"subjectPrefix", "p.q"},
                {"credentials",
                 {{"username", "u"}, {"passwordSecretRef", {{"name", "pw"}, {"key", "k"}}}}}}},
              {"output", {{"secretName", "env"}}}}}};
  BackendView v(o);
  EXPECT_EQ(v.server().ToString(), "nats/s");
  EXPECT_EQ(v.subject_prefix(), "p.q");
  EXPECT_EQ(v.username(), "u");
  ASSERT_TRUE(v.password_secret());
  EXPECT_EQ(v.password_secret()->key, "k");
  EXPECT_EQ(v.credentials_secret_name(), "pw");
  EXPECT_EQ(v.env_secret_name(), "env");
}

TEST(Views, WrongTypesReadAsDefaults) {
  json o = {{"metadata", 5},
            {"spec", {{"kind", 1}, {"nats", "x"}, {"postgres", {{"maxConns", "7"}}}}}};
  BackendView v(o);
  EXPECT_EQ(v.kind(), "");
  EXPECT_FALSE(v.has_nats());
  EXPECT_EQ(v.max_conns(), 5);
  EXPECT_EQ(v.name(), "");
}

TEST(Views, Server) {
  json o = {{"metadata", {{"name", "shared"}, {"namespace", "nats"}}},
            {"spec",
             {{"url", "nats://a"},
              {"maxPayload", "32Mi"},
              {"allowedNamespaces", {{"from", "List"}, {"names", {"a", "b"}}}}}}};
  NatsServerView v(o);
  EXPECT_EQ(v.max_payload(), 32 * 1024 * 1024);
  EXPECT_EQ(v.max_pending(), 64 * 1024 * 1024);
  EXPECT_EQ(v.isolation(), "Permissions");
  EXPECT_EQ(v.config_secret_name(), "shared-switchboard");
  EXPECT_EQ(v.config_key(), "switchboard.conf");
  EXPECT_FALSE(v.ca_secret());
  EXPECT_TRUE(v.AllowsNamespace("a"));
  EXPECT_FALSE(v.AllowsNamespace("nats"));  // List means only the listed ones
  o["spec"]["allowedNamespaces"] = {{"from", "All"}};
  EXPECT_TRUE(NatsServerView(o).AllowsNamespace("anything"));
  o["spec"].erase("allowedNamespaces");
  EXPECT_TRUE(NatsServerView(o).AllowsNamespace("nats"));
  EXPECT_FALSE(NatsServerView(o).AllowsNamespace("team-a"));
  o["spec"]["maxPayload"] = "lots";
  EXPECT_FALSE(NatsServerView(o).max_payload());
  o["spec"]["tls"] = {{"caSecretRef", {{"name", "ca"}}}};
  EXPECT_EQ(NatsServerView(o).ca_secret()->key, "ca.crt");
}

TEST(Views, ServerProvisioning) {
  json o = {{"metadata", {{"name", "shared"}, {"namespace", "nats"}}},
            {"spec", {{"url", "nats://a"}}}};
  NatsServerView file(o);
  EXPECT_EQ(file.provisioning_mode(), "IncludeFile");
  EXPECT_FALSE(file.auth_callout());
  EXPECT_EQ(file.callout_account(), "HATCHET");
  EXPECT_EQ(file.callout_secret_name(), "shared-auth-callout");
  o["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  EXPECT_TRUE(NatsServerView(o).auth_callout());
  o["spec"]["provisioning"]["authCallout"] = {{"account", "TENANTS"}, {"secretName", "keys"}};
  NatsServerView callout(o);
  EXPECT_EQ(callout.callout_account(), "TENANTS");
  EXPECT_EQ(callout.callout_secret_name(), "keys");
  // As written: the rules refuse a mode of another case, the views do not guess.
  o["spec"]["provisioning"]["mode"] = "authcallout";
  EXPECT_EQ(NatsServerView(o).provisioning_mode(), "authcallout");
  EXPECT_FALSE(NatsServerView(o).auth_callout());
}

}  // namespace
}  // namespace switchboard::api
