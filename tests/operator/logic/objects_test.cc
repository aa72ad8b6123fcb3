#include "switchboard/operator_logic/objects.h"

#include <gtest/gtest.h>

#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

TEST(BuildSecret, ShapeForServerSideApply) {
  SecretSpec spec;
  spec.ns = "team-a";
  spec.name = "hatchet-pubsub-env";
  spec.data = {{"K", "v"}};
  spec.labels = {{std::string(kBackendLabel), "hatchet"}};
  spec.owner = OwnerRef{.kind = "PubSubBackend", .name = "hatchet", .uid = "uid-1"};
  json s = BuildSecret(spec);
  EXPECT_EQ(s["apiVersion"], "v1");
  EXPECT_EQ(s["kind"], "Secret");
  EXPECT_EQ(s["type"], "Opaque");
  EXPECT_EQ(s["metadata"]["name"], "hatchet-pubsub-env");
  EXPECT_EQ(s["metadata"]["namespace"], "team-a");
  EXPECT_EQ(s["metadata"]["labels"]["app.kubernetes.io/managed-by"], "switchboard");
  EXPECT_EQ(s["metadata"]["labels"]["pubsub.switchboard.dev/backend"], "hatchet");
  EXPECT_FALSE(s["metadata"].contains("annotations"));
  const json& ref = s["metadata"]["ownerReferences"][0];
  EXPECT_EQ(ref["apiVersion"], "pubsub.switchboard.dev/v1alpha1");
  EXPECT_EQ(ref["kind"], "PubSubBackend");
  EXPECT_EQ(ref["uid"], "uid-1");
  EXPECT_EQ(ref["controller"], true);
  EXPECT_EQ(ref["blockOwnerDeletion"], true);
  EXPECT_EQ(s["data"]["K"], "dg==");
  EXPECT_EQ(DecodeSecretData(s).value(), spec.data);
  EXPECT_EQ(CheckOwnership(s, "uid-1"), Ownership::kOwned);
  EXPECT_EQ(BuildSecret(spec).dump(), s.dump()) << "deterministic";
}

TEST(DecodeSecretData, StringDataWinsAndBadBase64NamesTheKey) {
  json s = {{"data", {{"a", "eA=="}, {"b", "eA=="}}}, {"stringData", {{"b", "y"}}}};
  EXPECT_EQ(DecodeSecretData(s).value(), (SecretData{{"a", "x"}, {"b", "y"}}));
  auto bad = DecodeSecretData({{"data", {{"pw", "not base64!"}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("data.pw"), std::string::npos);
  EXPECT_TRUE(DecodeSecretData(nullptr).value().empty());
}

// .data of another type than an object is refused, naming it; a null or
// missing one is empty.
TEST(DecodeSecretData, DataThatIsNotAnObjectIsRefused) {
  auto bad = DecodeSecretData({{"data", json::array()}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("data"), std::string::npos);
  EXPECT_TRUE(DecodeSecretData({{"data", nullptr}}).value().empty());
  EXPECT_TRUE(DecodeSecretData(json::object()).value().empty());
}

TEST(CheckOwnership, Table) {
  auto secret = [](json labels, json refs) {
    return json{{"metadata", {{"name", "x"}, {"labels", labels}, {"ownerReferences", refs}}}};
  };
  json ours = {{"app.kubernetes.io/managed-by", "switchboard"}};
  json ref = json::array({{{"uid", "u1"}, {"kind", "PubSubBackend"}}});
  struct Case {
    json object;
    std::string uid;
    Ownership want;
  } cases[] = {
      {nullptr, "u1", Ownership::kAbsent},
      {secret(ours, ref), "u1", Ownership::kOwned},
      {secret(ours, ref), "u2", Ownership::kForeign},            // another backend's
      {secret(json::object(), ref), "u1", Ownership::kForeign},  // label missing
      {secret({{"app.kubernetes.io/managed-by", "helm"}}, ref), "u1", Ownership::kForeign},
      {secret(ours, json::array()), "u1", Ownership::kForeign},
      {secret(ours, "junk"), "u1", Ownership::kForeign},
      {secret(ours, ref), "", Ownership::kForeign},
      {json{{"metadata", "junk"}}, "u1", Ownership::kForeign},
      {json::object(), "u1", Ownership::kForeign},
  };
  for (const auto& c : cases) EXPECT_EQ(CheckOwnership(c.object, c.uid), c.want) << c.object;
  std::string msg = ForeignSecretMessage("team-a", "hatchet-pubsub-env");
  EXPECT_NE(msg.find("team-a/hatchet-pubsub-env"), std::string::npos);
  EXPECT_NE(msg.find("will not overwrite"), std::string::npos);
}

}  // namespace
}  // namespace switchboard::operator_logic

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

TEST(Secrets, EnvCredentialsAndConfigAreOwnedLabelledAndHashed) {
  OwnerObject backend{"team-a", "hatchet", "uid-b"};
  SecretData env = NatsEnv("nats://n:4222", "u", "p", "hatchet.a");
  json e = EnvSecret(backend, "hatchet-pubsub-env", env);
  EXPECT_EQ(e["metadata"]["name"], "hatchet-pubsub-env");
  EXPECT_EQ(e["metadata"]["annotations"]["pubsub.switchboard.dev/content-hash"], EnvHash(env));
  EXPECT_EQ(DecodeSecretData(e).value(), env);
  EXPECT_EQ(CheckOwnership(e, "uid-b"), Ownership::kOwned);

  CredentialState st;
  st.current = {"u", "p", "$2b$11$" + std::string(53, 'a')};
  json c = CredentialsSecret(backend, st);
  EXPECT_EQ(c["metadata"]["name"], "hatchet-nats-credentials");
  EXPECT_EQ(c["metadata"]["labels"]["pubsub.switchboard.dev/backend"], "hatchet");
  EXPECT_EQ(DecodeState(DecodeSecretData(c).value()).value(), st);
  EXPECT_EQ(CheckOwnership(c, "uid-b"), Ownership::kOwned);

  RenderedConfig cfg{"max_payload: 16777216\n", "sha256:x", 0, {}};
  json s = ConfigSecret({"nats", "shared", "uid-s"}, "shared-switchboard", "switchboard.conf", cfg);
  EXPECT_EQ(s["metadata"]["namespace"], "nats");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["kind"], "NatsServer");
  EXPECT_EQ(s["metadata"]["annotations"]["pubsub.switchboard.dev/content-hash"], "sha256:x");
  EXPECT_EQ(DecodeSecretData(s).value().at("switchboard.conf"), cfg.text);
  EXPECT_EQ(CheckOwnership(s, "uid-b"), Ownership::kForeign);
}

TEST(Secrets, CalloutSecretIsOwnedByTheServerAndLabelled) {
  SecretData keys = {{"issuer", "AXYZ"}, {"issuer-seed", "SAXYZ"}};
  json s = CalloutSecret({"nats", "shared", "uid-s"}, "shared-auth-callout", keys);
  EXPECT_EQ(s["metadata"]["name"], "shared-auth-callout");
  EXPECT_EQ(s["metadata"]["namespace"], "nats");
  EXPECT_EQ(s["metadata"]["labels"]["app.kubernetes.io/managed-by"], "switchboard");
  EXPECT_EQ(s["metadata"]["labels"]["pubsub.switchboard.dev/server"], "shared");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["kind"], "NatsServer");
  EXPECT_FALSE(s["metadata"].contains("annotations"));
  EXPECT_EQ(DecodeSecretData(s).value(), keys);
  EXPECT_EQ(CheckOwnership(s, "uid-s"), Ownership::kOwned);
  EXPECT_EQ(CheckOwnership(s, "uid-b"), Ownership::kForeign);
}

// A backend's name may be longer than a label value may be (63): its
// Secrets then carry no name label, or the API server would refuse them.
TEST(Secrets, ANameTooLongForALabelIsLeftOutOfTheLabels) {
  const std::string name(200, 'n');
  OwnerObject backend{"team-a", name, "uid-b"};
  CredentialState st;
  st.current = {"u", "p", "$2b$11$" + std::string(53, 'a')};
  json c = CredentialsSecret(backend, st);
  EXPECT_FALSE(c["metadata"]["labels"].contains("pubsub.switchboard.dev/backend"));
  EXPECT_EQ(c["metadata"]["labels"]["app.kubernetes.io/managed-by"], "switchboard");
  EXPECT_EQ(c["metadata"]["ownerReferences"][0]["name"], name);
  EXPECT_EQ(CheckOwnership(c, "uid-b"), Ownership::kOwned);
  json e = EnvSecret(backend, "env", NatsEnv("nats://n:4222", "u", "p", "a"));
  EXPECT_FALSE(e["metadata"]["labels"].contains("pubsub.switchboard.dev/backend"));
  json at63 = CredentialsSecret({"team-a", std::string(63, 'n'), "uid-b"}, st);
  EXPECT_EQ(at63["metadata"]["labels"]["pubsub.switchboard.dev/backend"], std::string(63, 'n'));
}

}  // namespace
}  // namespace switchboard::operator_logic
