// Upgrade in place: objects exactly as the operator wrote them in the
// older layout (finalizer pubsub.switchboard.dev/finalizer,
// credentials Secrets without rotation-count or rotation-phase, a
// user-supplied password kept as a password-check instead of a copy, a
// rotation in its Retiring phase, env and config Secrets without the newer
// labels) are adopted by the new operator: no password changes, no user
// ever missing from the file the nats-server includes, no engine connection
// dropped, the old finalizer replaced, every backend Ready.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <atomic>
#include <thread>

#include "switchboard/kube/client.h"
#include "switchboard/kube/config.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;
namespace logic = ::switchboard::operator_logic;

struct Legacy {
  std::string name;
  logic::SecretData creds;  // the old layout
  std::string env_user, env_password;
  std::vector<logic::NatsUser> users;  // as the old operator rendered them
  std::optional<std::string> user_secret_password;
};

TEST(OperatorUpgradeE2E, OldObjectsAreAdoptedWithoutChangingAnything) {
  ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
  auto cfg = kube::Config::FromKubeconfig(Kubeconfig());
  ASSERT_TRUE(cfg.ok());
  auto client = std::move(kube::Client::New(*cfg)).value();
  const std::string ns = UniqueName("op-upgrade");
  CreateNamespace(ns);
  LocalNats nats;
  ASSERT_TRUE(nats.ok());

  auto hash = [](const std::string& pw, int cost) { return logic::BcryptHash(pw, cost).value(); };
  std::vector<Legacy> legacy;
  {
    Legacy g{"gen"};
    std::string h = hash("generated-pw-0123456789", 6);
    g.creds = {{"username", ns + "-gen"}, {"password", "generated-pw-0123456789"}, {"bcrypt", h}};
    g.env_user = ns + "-gen";
    g.env_password = "generated-pw-0123456789";
    g.users = {{ns + "-gen", h}};
    legacy.push_back(g);
  }
  {
    Legacy e{"ext"};
    std::string h = hash("users-own-password", 11);
    e.creds = {{"username", ns + "-ext"}, {"bcrypt", h}, {"password-check", "sha256:0"}};
    e.env_user = ns + "-ext";
    e.env_password = "users-own-password";
    e.users = {{ns + "-ext", h}};
    e.user_secret_password = "users-own-password";
    legacy.push_back(e);
  }
  {
    Legacy r{"rot"};
    std::string h0 = hash("old-pw-0123456789", 6), h1 = hash("new-pw-0123456789", 6);
    r.creds = {{"username", ns + "-rot-r1"},
               {"password", "new-pw-0123456789"},
               {"bcrypt", h1},
               {"rotation-count", "1"},
               {"rotation-token", "t1"},
               {"previous-username", ns + "-rot"},
               {"previous-bcrypt", h0},
               {"retires-at", "2099-01-01T00:00:00Z"}};
    r.env_user = ns + "-rot-r1";
    r.env_password = "new-pw-0123456789";
    r.users = {{ns + "-rot-r1", h1}, {ns + "-rot", h0}};
    legacy.push_back(r);
  }

  // The NatsServer and the backends, with the old finalizer.
  json server_obj = ::switchboard::testing::ServerBuilder(ns, "shared").Url(nats.url());
  auto created_server = client->Create(kube::resources::NatsServer(), server_obj);
  ASSERT_TRUE(created_server.ok()) << created_server.status().ToString();

  logic::RenderInput render;
  render.server_ns = ns;
  render.server_name = "shared";
  std::vector<std::string> env_names;
  for (const auto& l : legacy) {
    ::switchboard::testing::BackendBuilder backend(ns, l.name);
    backend.Server("", "shared")
        .Prefix("hatchet." + l.name)
        .Set("/metadata/finalizers", {"pubsub.switchboard.dev/finalizer"});
    if (l.user_secret_password) {
      backend.Set("/spec/nats/credentials/passwordSecretRef", {{"name", l.name + "-pw"}});
      logic::SecretSpec us{
          .ns = ns, .name = l.name + "-pw", .data = {{"password", *l.user_secret_password}}};
      json user_secret = logic::BuildSecret(us);
      user_secret["metadata"].erase("labels");  // the user's, not ours
      ASSERT_TRUE(client->Create(kube::resources::Secret(), user_secret).ok());
    }
    auto created = client->Create(kube::resources::PubSubBackend(), backend.Json());
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    const std::string uid = (*created)["metadata"]["uid"];
    auto owned = [&](const std::string& name, logic::SecretData data) {
      // Old operator: managed-by label and ownerReference only.
      logic::SecretSpec s{.ns = ns, .name = name, .data = std::move(data)};
      s.owner = logic::OwnerRef{.kind = "PubSubBackend", .name = l.name, .uid = uid};
      return logic::BuildSecret(s);
    };
    ASSERT_TRUE(
        client->Create(kube::resources::Secret(), owned(l.name + "-nats-credentials", l.creds))
            .ok());
    ASSERT_TRUE(client
                    ->Create(kube::resources::Secret(),
                             owned(l.name + "-pubsub-env",
                                   logic::NatsEnv(nats.url(), l.env_user, l.env_password,
                                                  "hatchet." + l.name)))
                    .ok());
    env_names.push_back(l.name + "-pubsub-env");
    render.installations.push_back({ns, l.name, "hatchet." + l.name, l.users});
  }
  auto rendered = logic::RenderNatsConfig(render);
  ASSERT_TRUE(rendered.ok());
  {
    logic::SecretSpec s{
        .ns = ns, .name = "shared-switchboard", .data = {{"switchboard.conf", rendered->text}}};
    s.owner = logic::OwnerRef{
        .kind = "NatsServer", .name = "shared", .uid = (*created_server)["metadata"]["uid"]};
    ASSERT_TRUE(client->Create(kube::resources::Secret(), logic::BuildSecret(s)).ok());
  }
  testing::Process sync = StartConfigSync(nats, ns, "shared-switchboard");
  ASSERT_TRUE(testing::WaitFor([&] { return nats.IncludeText() == rendered->text; }, 20s));
  // The file is written; the server loads it on config-sync's signal, a
  // moment later: wait until it admits the first engine's user.
  auto admits = [&](const std::string& user, const std::string& pw) {
    natsOptions* o = nullptr;
    natsOptions_Create(&o);
    natsOptions_SetURL(o, nats.url().c_str());
    natsOptions_SetUserInfo(o, user.c_str(), pw.c_str());
    natsOptions_SetAllowReconnect(o, false);
    natsConnection* nc = nullptr;
    const bool ok = natsConnection_Connect(&nc, o) == NATS_OK;
    if (nc) natsConnection_Destroy(nc);
    natsOptions_Destroy(o);
    return ok;
  };
  ASSERT_TRUE(testing::WaitFor(
      [&] { return admits(legacy.front().env_user, legacy.front().env_password); }, 20s));

  // Engines connected with the old env Secrets, both users of the rotation.
  std::atomic<int> disconnects{0};
  std::vector<natsConnection*> conns;
  auto connect = [&](const std::string& user, const std::string& pw) {
    natsOptions* o = nullptr;
    natsOptions_Create(&o);
    natsOptions_SetURL(o, nats.url().c_str());
    natsOptions_SetUserInfo(o, user.c_str(), pw.c_str());
    natsOptions_SetMaxReconnect(o, -1);
    natsOptions_SetDisconnectedCB(
        o, [](natsConnection*, void* d) { static_cast<std::atomic<int>*>(d)->fetch_add(1); },
        &disconnects);
    natsConnection* nc = nullptr;
    EXPECT_EQ(natsConnection_Connect(&nc, o), NATS_OK) << user;
    natsOptions_Destroy(o);
    if (nc) conns.push_back(nc);
  };
  for (const auto& l : legacy) connect(l.env_user, l.env_password);
  connect(ns + "-rot", "old-pw-0123456789");

  std::map<std::string, std::map<std::string, std::string>> env_before;
  for (const auto& n : env_names) env_before[n] = SecretData(ns, n);

  std::atomic<bool> stop{false};
  std::atomic<bool> ever_changed{false};
  std::thread poll([&] {
    while (!stop) {
      if (nats.IncludeText() != rendered->text) ever_changed = true;
      std::this_thread::sleep_for(200ms);
    }
  });

  OperatorProcess op({ns});
  for (const auto& l : legacy) {
    EXPECT_TRUE(WaitReady(ns, l.name, "True", "", 60))
        << Get("psb", ns, l.name).dump(2) << op.Log();
    json b = Get("psb", ns, l.name);
    EXPECT_EQ(b["metadata"]["finalizers"], json::array({"pubsub.switchboard.dev/cleanup"}))
        << l.name;
  }
  EXPECT_EQ(ReadyStatus(Get("natssrv", ns, "shared")), "True");
  stop = true;
  poll.join();
  EXPECT_FALSE(ever_changed) << "the rendered file changed during the upgrade:\n"
                             << nats.IncludeText();
  for (const auto& n : env_names) EXPECT_EQ(SecretData(ns, n), env_before[n]) << n;
  for (const auto& l : legacy) {
    auto creds = SecretData(ns, l.name + "-nats-credentials");
    EXPECT_EQ(creds["bcrypt"], l.creds.at("bcrypt")) << l.name;
    EXPECT_EQ(creds["username"], l.creds.at("username")) << l.name;
    EXPECT_EQ(creds.count("password-check"), 0u) << "one layout: " << l.name;
  }
  EXPECT_EQ(disconnects.load(), 0);
  for (auto* nc : conns) {
    EXPECT_EQ(natsConnection_Status(nc), NATS_CONN_STATUS_CONNECTED);
    natsConnection_Destroy(nc);
  }
  DeleteNamespace(ns);
}

}  // namespace
}  // namespace switchboard::e2e
