// The rendered include file against a real nats-server (Debian's 2.9):
// it passes `nats-server -t` when included from a main config (as the NATS
// Helm chart includes it), users authenticate with their bcrypt-hashed
// passwords and are confined to their prefix, and a reload (SIGHUP) applies
// a changed render, including the staged rotation that keeps an old user's
// connection alive.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>

#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

namespace switchboard::operator_logic {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::NatsServer;
using testing::TempDir;
using testing::WaitFor;

using pubsub::internal::NatsConnectionPtr;
using pubsub::internal::NatsMsgPtr;
using pubsub::internal::NatsOptionsPtr;
using pubsub::internal::NatsSubscriptionPtr;

// One nats.c connection; counts permission violations, which nats.c reports
// only through the async error handler.
class Client {
 public:
  // Connects without reconnecting, so a server-side removal shows as closed.
  static std::unique_ptr<Client> Connect(const std::string& url, const std::string& user,
                                         const std::string& password, natsStatus* status) {
    auto client = std::unique_ptr<Client>(new Client);
    natsOptions* raw = nullptr;
    *status = natsOptions_Create(&raw);
    if (*status != NATS_OK) return nullptr;
    NatsOptionsPtr opts(raw);
    natsOptions_SetURL(opts.get(), url.c_str());
    if (!user.empty()) natsOptions_SetUserInfo(opts.get(), user.c_str(), password.c_str());
    natsOptions_SetTimeout(opts.get(), 5000);
    natsOptions_SetAllowReconnect(opts.get(), false);
    natsOptions_SetErrorHandler(opts.get(), &Client::OnError, client.get());
    natsConnection* conn = nullptr;
    *status = natsConnection_Connect(&conn, opts.get());
    if (*status != NATS_OK) return nullptr;
    client->conn_.reset(conn);
    return client;
  }

  natsConnection* conn() { return conn_.get(); }
  int permission_errors() const { return permission_errors_.load(); }
  std::string last_error() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

  NatsSubscriptionPtr Subscribe(const std::string& subject) {
    natsSubscription* sub = nullptr;
    EXPECT_EQ(natsConnection_SubscribeSync(&sub, conn_.get(), subject.c_str()), NATS_OK);
    EXPECT_EQ(natsConnection_FlushTimeout(conn_.get(), 5000), NATS_OK);
    return NatsSubscriptionPtr(sub);
  }

  // Publishes `data` to `subject` and expects it back on `sub`.
  bool RoundTrip(natsSubscription* sub, const std::string& subject, const std::string& data) {
    if (natsConnection_PublishString(conn_.get(), subject.c_str(), data.c_str()) != NATS_OK) {
      return false;
    }
    natsMsg* raw = nullptr;
    if (natsSubscription_NextMsg(&raw, sub, 5000) != NATS_OK) return false;
    NatsMsgPtr msg(raw);
    return std::string(natsMsg_GetData(msg.get()), natsMsg_GetDataLength(msg.get())) == data;
  }

 private:
  Client() = default;

  // Runs on a nats.c thread; must not throw.
  static void OnError(natsConnection* nc, natsSubscription*, natsStatus err,
                      void* closure) noexcept {
    auto* self = static_cast<Client*>(closure);
    if (err == NATS_NOT_PERMITTED) self->permission_errors_.fetch_add(1);
    const char* text = nullptr;
    natsConnection_GetLastError(nc, &text);
    std::lock_guard<std::mutex> lock(self->mu_);
    self->last_error_ = text != nullptr ? text : natsStatus_GetText(err);
  }

  NatsConnectionPtr conn_;
  std::atomic<int> permission_errors_{0};
  std::mutex mu_;
  std::string last_error_;  // guarded by mu_
};

struct User {
  std::string name;
  std::string password;
  std::string bcrypt;
};

// Real bcrypt hashes; cost 4 keeps the test fast (NATS accepts any cost).
User MakeUser(const std::string& name) {
  User u{name, GeneratePassword().value(), ""};
  u.bcrypt = BcryptHash(u.password, 4).value();
  return u;
}

Installation Inst(const std::string& ns, const std::string& prefix,
                  std::vector<const User*> users) {
  Installation inst{ns, "hatchet", prefix, {}};
  for (const User* u : users) inst.users.push_back({u->name, u->bcrypt});
  return inst;
}

std::string Render(std::vector<Installation> installations,
                   Isolation isolation = Isolation::kPermissions) {
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.isolation = isolation;
  in.installations = std::move(installations);
  auto r = RenderNatsConfig(in);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->rejected.empty());
  return r.ok() ? r->text : "";
}

// `nats-server -t` on a main config that includes the file, as the Helm
// chart does. Returns the exit code; `output` gets stdout+stderr.
int CheckConfig(const std::string& include_text, std::string* output) {
  TempDir dir;
  dir.WriteFile("switchboard.conf", include_text);
  std::string main_conf =
      dir.WriteFile("nats.conf", "port: 4222\nhttp_port: 8222\ninclude \"switchboard.conf\"\n");
  auto r = testing::Run({"nats-server", "-t", "-c", main_conf});
  *output = r.out + r.err;
  return r.exit_code;
}

// A nats-server whose config includes the rendered file from `dir`.
std::string IncludeFrom(const NatsServer& server, const TempDir& dir) {
  // nats-server resolves include paths relative to the including file.
  auto rel = std::filesystem::relative(dir.path() + "/switchboard.conf", server.dir());
  return "include \"" + rel.string() + "\"\n";
}

// The servers start without the include (its path is relative to their own
// dir, known only once they exist), so the first reload turns
// authentication on: wait until a wrong password is refused, or a client
// could get in through the still-open server.
bool IncludeAndWaitForAuth(NatsServer& server, const TempDir& dir) {
  if (!server.Reload(IncludeFrom(server, dir))) return false;
  natsStatus st;
  return WaitFor([&] { return Client::Connect(server.url(), "nobody", "wrong", &st) == nullptr; },
                 seconds(10));
}

// Raw nats.c handles: the library stays open for the suite.
class RenderNatsTest : public testing::NatsLibraryTest {
 protected:
  User a_ = MakeUser("team-a-hatchet");
  User b_ = MakeUser("team-b-hatchet");
};

TEST_F(RenderNatsTest, RenderedFilesPassNatsServerCheck) {
  std::string out;
  EXPECT_EQ(CheckConfig(Render({Inst("team-a", "hatchet.team-a", {&a_}),
                                Inst("team-b", "hatchet.team-b", {&b_})}),
                        &out),
            0)
      << out;
  EXPECT_EQ(CheckConfig(Render({Inst("team-a", "hatchet.team-a", {&a_}),
                                Inst("team-b", "hatchet.team-b", {&b_})},
                               Isolation::kAccounts),
                        &out),
            0)
      << out;
  EXPECT_EQ(CheckConfig(Render({}), &out), 0) << out;
  // Unusual but accepted prefixes and the longest user names stay valid.
  User longest = MakeUser(std::string(128, 'l') + "-r99");
  EXPECT_EQ(CheckConfig(Render({Inst("team-a", "caf\xc3\xa9.o'k.a$b#c", {&a_}),
                                Inst("team-l", "l", {&longest})}),
                        &out),
            0)
      << out;
  // Control: the check does catch a broken file (two users with one name).
  EXPECT_NE(CheckConfig(Render({Inst("team-a", "hatchet.team-a", {&a_})}) +
                            "authorization { users: [ {user: \"x\"}, {user: \"x\"} ] }\n",
                        &out),
            0);
}

// Property: whatever strings arrive (quotes, backslashes, braces, newlines,
// `$`, `#`, UTF-8...), what the renderer accepts never breaks the file:
// `nats-server -t` passes and every accepted user appears exactly once.
TEST_F(RenderNatsTest, RandomHostileInputNeverBreaksTheFile) {
  // Mostly characters the renderer accepts (some unusual in a config file:
  // braces, '#', ':', '$' inside a token, UTF-8), sometimes hostile ones.
  const std::vector<std::string> prefix_ok = {"a", "b", "-", "_",        "'",      ":",
                                              ",", "=", "@", "\xc3\xa9", "#",      "{",
                                              "}", "[", "]", "$",        "include"};
  // The CRD's user-name alphabet (api::CheckUsername), which the render
  // shares; '@', '+' and '=' are hostile here.
  const std::vector<std::string> user_ok = {"a", "b", "-", "_", "."};
  const std::vector<std::string> hostile = {"\"", "\\", " ",  "\n", "\t", "*", ">", "\x01",
                                            "{",  "$",  "..", "\r", "@",  "+", "="};
  std::mt19937 rng(20261130);
  int accepted = 0;
  auto random_string = [&](const std::vector<std::string>& ok, int parts, bool dots) {
    std::string out = "x";
    for (int i = 0; i < parts; ++i) {
      if (rng() % 12 == 0) {
        out += hostile[rng() % hostile.size()];
      } else {
        out += ok[rng() % ok.size()];
      }
      if (dots && rng() % 4 == 0) out += ".x";
    }
    return out;
  };
  for (int round = 0; round < 5; ++round) {
    RenderInput in;
    in.server_ns = "nats";
    in.server_name = "shared";
    in.isolation = round % 2 == 0 ? Isolation::kPermissions : Isolation::kAccounts;
    for (int i = 0; i < 60; ++i) {
      std::string ns = "ns-" + std::to_string(i);
      if (i % 10 == 0) ns += random_string(user_ok, 2, false);  // names go into comments
      in.installations.push_back({ns,
                                  "app",
                                  random_string(prefix_ok, 6, true),
                                  {{random_string(user_ok, 5, false), a_.bcrypt}}});
    }
    auto r = RenderNatsConfig(in);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(static_cast<size_t>(r->installations) + r->rejected.size(), in.installations.size());
    size_t users = 0;
    for (size_t pos = 0; (pos = r->text.find("{user: ", pos)) != std::string::npos; ++pos) ++users;
    EXPECT_EQ(users, static_cast<size_t>(r->installations == 0 ? 1 : r->installations));
    std::string out;
    EXPECT_EQ(CheckConfig(r->text, &out), 0) << out << "\n" << r->text;
    accepted += r->installations;
  }
  // The property is only worth something if plenty of input got through.
  EXPECT_GT(accepted, 30);
  RecordProperty("accepted", accepted);
}

TEST_F(RenderNatsTest, UsersAreConfinedToTheirPrefixAndReloadAddsAUser) {
  TempDir dir;
  dir.WriteFile("switchboard.conf", Render({Inst("team-a", "hatchet.team-a", {&a_}),
                                            Inst("team-b", "hatchet.team-b", {&b_})}));
  // max_payload 0: the rendered file sets it.
  NatsServer server("", 0);
  ASSERT_TRUE(IncludeAndWaitForAuth(server, dir)) << server.Log();
  natsStatus st;
  // The reload is asynchronous: wait until A can log in.
  std::unique_ptr<Client> a;
  ASSERT_TRUE(WaitFor(
      [&] { return (a = Client::Connect(server.url(), a_.name, a_.password, &st)) != nullptr; },
      seconds(10)))
      << natsStatus_GetText(st) << "\n"
      << server.Log();
  EXPECT_EQ(natsConnection_GetMaxPayload(a->conn()), 16777216);

  // Own prefix: round trip.
  auto own = a->Subscribe("hatchet.team-a.tenant_v1");
  EXPECT_TRUE(a->RoundTrip(own.get(), "hatchet.team-a.tenant_v1", "hello"));
  EXPECT_EQ(a->permission_errors(), 0) << a->last_error();

  // B's prefix: publish and subscribe are denied (reported asynchronously).
  auto b = Client::Connect(server.url(), b_.name, b_.password, &st);
  ASSERT_NE(b, nullptr) << natsStatus_GetText(st);
  auto b_sub = b->Subscribe("hatchet.team-b.tenant_v1");
  EXPECT_EQ(natsConnection_PublishString(a->conn(), "hatchet.team-b.tenant_v1", "x"), NATS_OK);
  EXPECT_TRUE(WaitFor([&] { return a->permission_errors() >= 1; }, seconds(5)));
  EXPECT_NE(a->last_error().find("Permissions Violation"), std::string::npos) << a->last_error();
  auto stolen = a->Subscribe("hatchet.team-b.tenant_v1");
  EXPECT_TRUE(WaitFor([&] { return a->permission_errors() >= 2; }, seconds(5)));
  // Two tokens below the prefix are outside `<prefix>.*` too.
  EXPECT_EQ(natsConnection_PublishString(a->conn(), "hatchet.team-a.x.y", "x"), NATS_OK);
  EXPECT_TRUE(WaitFor([&] { return a->permission_errors() >= 3; }, seconds(5)));
  // B got nothing of A's publish: B's own next message is the first it sees.
  EXPECT_TRUE(b->RoundTrip(b_sub.get(), "hatchet.team-b.tenant_v1", "from-b"));

  // Wrong password and unknown users are refused.
  EXPECT_EQ(Client::Connect(server.url(), a_.name, b_.password, &st), nullptr);
  EXPECT_EQ(st, NATS_CONNECTION_AUTH_FAILED);
  EXPECT_EQ(Client::Connect(server.url(), "", "", &st), nullptr);

  // A third installation appears: re-render, reload, it can log in; the
  // existing connections are untouched.
  User c = MakeUser("team-c-hatchet");
  EXPECT_EQ(Client::Connect(server.url(), c.name, c.password, &st), nullptr);
  dir.WriteFile("switchboard.conf", Render({Inst("team-a", "hatchet.team-a", {&a_}),
                                            Inst("team-b", "hatchet.team-b", {&b_}),
                                            Inst("team-c", "hatchet.team-c", {&c})}));
  ASSERT_TRUE(server.Reload(IncludeFrom(server, dir)));
  std::unique_ptr<Client> cc;
  EXPECT_TRUE(WaitFor(
      [&] { return (cc = Client::Connect(server.url(), c.name, c.password, &st)) != nullptr; },
      seconds(10)))
      << server.Log();
  EXPECT_TRUE(a->RoundTrip(own.get(), "hatchet.team-a.tenant_v1", "still here"));
}

TEST_F(RenderNatsTest, StagedRotationKeepsTheOldConnectionUntilTheOldUserIsRemoved) {
  TempDir dir;
  dir.WriteFile("switchboard.conf", Render({Inst("team-a", "hatchet.team-a", {&a_})}));
  NatsServer server("", 0);
  ASSERT_TRUE(IncludeAndWaitForAuth(server, dir)) << server.Log();
  natsStatus st;
  std::unique_ptr<Client> old_conn;
  ASSERT_TRUE(WaitFor(
      [&] {
        return (old_conn = Client::Connect(server.url(), a_.name, a_.password, &st)) != nullptr;
      },
      seconds(10)));
  auto sub = old_conn->Subscribe("hatchet.team-a.t");

  // Staged/Retiring: new user first, old user kept.
  User r1 = MakeUser("team-a-hatchet-r1");
  dir.WriteFile("switchboard.conf", Render({Inst("team-a", "hatchet.team-a", {&r1, &a_})}));
  ASSERT_TRUE(server.Reload(IncludeFrom(server, dir)));
  std::unique_ptr<Client> new_conn;
  ASSERT_TRUE(WaitFor(
      [&] {
        return (new_conn = Client::Connect(server.url(), r1.name, r1.password, &st)) != nullptr;
      },
      seconds(10)));
  EXPECT_FALSE(natsConnection_IsClosed(old_conn->conn()));
  EXPECT_TRUE(old_conn->RoundTrip(sub.get(), "hatchet.team-a.t", "old user still works"));
  // Both users share the installation's subjects.
  auto new_sub = new_conn->Subscribe("hatchet.team-a.t");
  EXPECT_TRUE(old_conn->RoundTrip(sub.get(), "hatchet.team-a.t", "fan-out"));
  natsMsg* raw = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&raw, new_sub.get(), 5000), NATS_OK);
  natsMsg_Destroy(raw);

  // Retired: the old user's connection is dropped, the new one stays.
  dir.WriteFile("switchboard.conf", Render({Inst("team-a", "hatchet.team-a", {&r1})}));
  ASSERT_TRUE(server.Reload(IncludeFrom(server, dir)));
  EXPECT_TRUE(WaitFor([&] { return natsConnection_IsClosed(old_conn->conn()); }, seconds(10)));
  EXPECT_FALSE(natsConnection_IsClosed(new_conn->conn()));
  EXPECT_EQ(natsConnection_FlushTimeout(new_conn->conn(), 5000), NATS_OK);
}

TEST_F(RenderNatsTest, AccountsIsolationWorksLive) {
  TempDir dir;
  dir.WriteFile("switchboard.conf", Render({Inst("team-a", "hatchet.team-a", {&a_}),
                                            Inst("team-b", "hatchet.team-b", {&b_})},
                                           Isolation::kAccounts));
  NatsServer server("", 0);
  ASSERT_TRUE(IncludeAndWaitForAuth(server, dir)) << server.Log();
  natsStatus st;
  std::unique_ptr<Client> a;
  ASSERT_TRUE(WaitFor(
      [&] { return (a = Client::Connect(server.url(), a_.name, a_.password, &st)) != nullptr; },
      seconds(10)))
      << server.Log();
  auto sub = a->Subscribe("hatchet.team-a.x");
  EXPECT_TRUE(a->RoundTrip(sub.get(), "hatchet.team-a.x", "in my account"));
  auto b = Client::Connect(server.url(), b_.name, b_.password, &st);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(natsConnection_PublishString(b->conn(), "hatchet.team-a.x", "x"), NATS_OK);
  EXPECT_TRUE(WaitFor([&] { return b->permission_errors() >= 1; }, seconds(5)));
}

// What nats.c says about the last failed call on this thread (a refused
// CONNECT carries the server's -ERR text).
std::string LastError() {
  natsStatus st = NATS_OK;
  const char* text = nats_GetLastError(&st);
  return text != nullptr ? text : "";
}

TEST_F(RenderNatsTest, AccountLimitsPassNatsServerCheck) {
  Installation a = Inst("team-a", "hatchet.team-a", {&a_});
  a.limits = {10, 500, 16777216};
  Installation b = Inst("team-b", "hatchet.team-b", {&b_});
  b.limits = {std::nullopt, 7, std::nullopt};
  const std::string text = Render({a, b}, Isolation::kAccounts);
  ASSERT_NE(text.find("limits: {max_connections: 10"), std::string::npos) << text;
  std::string out;
  EXPECT_EQ(CheckConfig(text, &out), 0) << out << "\n" << text;
}

// The limits NATS enforces from the rendered file: an installation at its
// maxConnections is refused with the server's error while another
// installation still connects, and a connection's subscriptions stop at
// maxSubscriptions.
TEST_F(RenderNatsTest, AccountLimitsAreEnforcedPerInstallation) {
  constexpr int kConnections = 2;
  constexpr int kSubscriptions = 3;
  User a2 = MakeUser("team-a-hatchet-r1");  // a second user of the same installation
  Installation a = Inst("team-a", "hatchet.team-a", {&a_, &a2});
  a.limits = {kConnections, kSubscriptions, std::nullopt};
  TempDir dir;
  dir.WriteFile("switchboard.conf",
                Render({a, Inst("team-b", "hatchet.team-b", {&b_})}, Isolation::kAccounts));
  NatsServer server("", 0);
  ASSERT_TRUE(IncludeAndWaitForAuth(server, dir)) << server.Log();

  natsStatus st = NATS_OK;
  std::unique_ptr<Client> first;
  ASSERT_TRUE(WaitFor(
      [&] { return (first = Client::Connect(server.url(), a_.name, a_.password, &st)) != nullptr; },
      seconds(10)))
      << server.Log();
  std::vector<std::unique_ptr<Client>> held;
  held.push_back(std::move(first));
  // The account counts connections, whichever of its users makes them.
  auto second = Client::Connect(server.url(), a2.name, a2.password, &st);
  ASSERT_NE(second, nullptr) << natsStatus_GetText(st);
  held.push_back(std::move(second));
  ASSERT_EQ(held.size(), static_cast<size_t>(kConnections));
  auto over = Client::Connect(server.url(), a_.name, a_.password, &st);
  EXPECT_EQ(over, nullptr);
  EXPECT_NE(LastError().find("maximum account active connections exceeded"), std::string::npos)
      << natsStatus_GetText(st) << ": " << LastError();
  // Another installation is not affected.
  auto b = Client::Connect(server.url(), b_.name, b_.password, &st);
  ASSERT_NE(b, nullptr) << natsStatus_GetText(st) << ": " << LastError();
  std::vector<NatsSubscriptionPtr> b_subs;
  for (int i = 0; i <= kSubscriptions; ++i) {
    b_subs.push_back(b->Subscribe("hatchet.team-b.t" + std::to_string(i)));
  }
  EXPECT_TRUE(b->last_error().empty()) << b->last_error();

  // Subscriptions per connection: the first kSubscriptions are taken, the
  // next is refused by the server.
  Client& c = *held[0];
  std::vector<NatsSubscriptionPtr> subs;
  for (int i = 0; i < kSubscriptions; ++i) {
    subs.push_back(c.Subscribe("hatchet.team-a.t" + std::to_string(i)));
  }
  EXPECT_TRUE(c.last_error().empty()) << c.last_error();
  EXPECT_FALSE(natsConnection_IsClosed(c.conn()));
  natsSubscription* extra = nullptr;
  natsConnection_SubscribeSync(&extra, c.conn(), "hatchet.team-a.extra");
  NatsSubscriptionPtr extra_sub(extra);
  natsConnection_FlushTimeout(c.conn(), 2000);
  // nats.c closes a connection on this -ERR and keeps its text as the
  // connection's last error.
  auto conn_error = [&] {
    const char* text = nullptr;
    natsConnection_GetLastError(c.conn(), &text);
    return std::string(text != nullptr ? text : "");
  };
  EXPECT_TRUE(WaitFor(
      [&] { return conn_error().find("maximum subscriptions exceeded") != std::string::npos; },
      seconds(10)))
      << "last error: " << conn_error();
  // The other installation's connection, past the same count, is fine.
  EXPECT_FALSE(natsConnection_IsClosed(b->conn()));
  EXPECT_EQ(natsConnection_FlushTimeout(b->conn(), 5000), NATS_OK);
}

TEST_F(RenderNatsTest, EmptyRenderKeepsTheServerLocked) {
  TempDir dir;
  dir.WriteFile("switchboard.conf", Render({}));
  NatsServer server("", 0);
  ASSERT_TRUE(IncludeAndWaitForAuth(server, dir)) << server.Log();
  natsStatus st = NATS_OK;
  // Before the reload lands anonymous clients may still get in; after it,
  // they must not.
  EXPECT_TRUE(
      WaitFor([&] { return Client::Connect(server.url(), "", "", &st) == nullptr; }, seconds(10)));
  EXPECT_EQ(st, NATS_CONNECTION_AUTH_FAILED);
}

}  // namespace
}  // namespace switchboard::operator_logic
