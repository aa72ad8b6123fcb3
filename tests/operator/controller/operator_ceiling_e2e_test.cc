// A NatsServer whose file no longer fits its config Secret (1 MiB): enough
// backends with long names, prefixes and user names to cross the limit.
// The newest are left out and say so (Ready=False ConfigFull, one event
// each), the NatsServer says how many fit and how many are left out
// (ConfigFits=False), every rendered backend becomes Ready against a real
// nats-server that loads the full file, and deleting rendered backends lets
// exactly as many of the oldest waiting ones in.
//
// N: SWITCHBOARD_CEILING_BACKENDS (default 1100; about 1,015 fit).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

int Backends() {
  const char* n = std::getenv("SWITCHBOARD_CEILING_BACKENDS");
  return n && std::atoi(n) > 0 ? std::atoi(n) : 1100;
}

std::string Index(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06d", i);
  return buf;
}

// ~970 bytes of file each: a 200-character name, a 150-character user, a
// 191-character prefix (the API's limits are 236, 200 and 191).
std::string Name(int i) { return "b" + Index(i) + "-" + std::string(192, 'n'); }
std::string User(int i) { return "u" + Index(i) + "-" + std::string(142, 'u'); }
std::string Prefix(int i) {
  return "hatchet." + std::string(60, 'p') + "." + std::string(60, 'q') + "." +
         std::string(53, 'r') + "." + Index(i);
}

std::string BackendDoc(const std::string& ns, int i, const std::string& srv_ns) {
  return "---\napiVersion: pubsub.switchboard.dev/v1alpha1\nkind: PubSubBackend\nmetadata: "
         "{name: " +
         Name(i) + ", namespace: " + ns +
         "}\nspec:\n  kind: nats\n  nats:\n    serverRef: {name: shared, namespace: " + srv_ns +
         "}\n    subjectPrefix: \"" + Prefix(i) + "\"\n    credentials: {username: " + User(i) +
         "}\n";
}

std::string Condition(const json& obj, const std::string& type, const char* field) {
  const json& st = obj.contains("status") ? obj["status"] : json::object();
  for (const auto& c : st.value("conditions", json::array())) {
    if (c.value("type", "") == type) return c.value(field, "");
  }
  return "";
}

int IndexOf(const json& psb) {
  return std::atoi(psb["metadata"]["name"].get<std::string>().substr(1, 6).c_str());
}

json ListBackends(const std::string& ns) {
  auto r = Kubectl({"get", "psb", "-n", ns, "-o", "json"});
  if (r.exit_code != 0) return json::object();
  return json::parse(r.out, nullptr, false);
}

TEST(OperatorCeilingE2E, AFullConfigLeavesOutTheNewestAndSaysSo) {
  ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
  const int n = Backends();
  const std::string srv_ns = UniqueName("ceil-srv");
  std::string be_ns = UniqueName("ceil");
  be_ns += "-" + std::string(62 - be_ns.size(), 'x');  // 63 characters
  CreateNamespace(srv_ns);
  CreateNamespace(be_ns);
  LocalNats nats;
  ASSERT_TRUE(nats.ok());
  testing::Process sync = StartConfigSync(nats, srv_ns, "shared-switchboard");
  // Probes only once each: a probe every 2 s for 1,000 backends is load
  // this test does not need.
  auto op = std::make_unique<OperatorProcess>(std::vector<std::string>{srv_ns, be_ns},
                                              std::vector<std::string>{"--probe-interval", "5m"});
  Apply(NatsServerYaml(srv_ns, "shared", nats.url(), {be_ns}));

  // In order, so creation order is index order (ties in creationTimestamp
  // fall back to namespace/name, which is index order too).
  for (int first = 0; first < n; first += 100) {
    std::string yaml;
    for (int i = first; i < std::min(n, first + 100); ++i) yaml += BackendDoc(be_ns, i, srv_ns);
    auto r = Kubectl({"create", "-f", "-"}, yaml);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Every backend gets a verdict: Ready (rendered, probed) or ConfigFull.
  int fit = -1;
  json list;
  auto settled = [&] {
    json srv = Get("natsserver", srv_ns, "shared");
    if (srv.is_null() || Condition(srv, "ConfigFits", "status") != "False") return false;
    fit = srv["status"].value("installations", -1);
    list = ListBackends(be_ns);
    int ready = 0, full = 0;
    for (const auto& b : list.value("items", json::array())) {
      ready += Condition(b, "Ready", "status") == "True";
      full += Condition(b, "Ready", "reason") == "ConfigFull";
    }
    return ready == fit && full == n - fit;
  };
  auto log_tail = [&] {
    const std::string log = op->Log();
    return log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
  };
  ASSERT_TRUE(testing::WaitFor(settled, 420s, 2s)) << "fit " << fit << " of " << n << "\n"
                                                   << log_tail();
  ASSERT_GT(fit, 0);
  ASSERT_LT(fit, n);

  // The newest are the ones left out, each saying so with the server and
  // the limit; the rest is rendered and Ready.
  for (const auto& b : list["items"]) {
    const int i = IndexOf(b);
    const std::string reason = Condition(b, "Ready", "reason");
    if (i < fit) {
      EXPECT_EQ(reason, "Probed") << i;
    } else {
      EXPECT_EQ(reason, "ConfigFull") << i;
      const std::string msg = Condition(b, "Ready", "message");
      EXPECT_NE(msg.find("NatsServer " + srv_ns + "/shared"), std::string::npos) << msg;
      EXPECT_NE(msg.find("1048576 bytes"), std::string::npos) << msg;
    }
  }
  json srv = Get("natsserver", srv_ns, "shared");
  const std::string fits = Condition(srv, "ConfigFits", "message");
  EXPECT_NE(fits.find(std::to_string(fit) + " installation(s) fit"), std::string::npos) << fits;
  EXPECT_NE(fits.find(std::to_string(n - fit) + " newer one(s) are left out"), std::string::npos)
      << fits;
  EXPECT_EQ(Condition(srv, "Ready", "status"), "True");

  // The file fits its Secret and holds exactly the rendered users; the
  // nats-server loaded it (the rendered backends' probes passed).
  auto data = SecretData(srv_ns, "shared-switchboard");
  const std::string& text = data["switchboard.conf"];
  EXPECT_LE(text.size(), operator_logic::kMaxSecretDataBytes);
  EXPECT_GT(text.size(),
            operator_logic::kMaxSecretDataBytes - operator_logic::kRotationReserveBytes - 1000);
  EXPECT_EQ(operator_logic::UsersInConfig(text).size(), static_cast<size_t>(fit));

  // Deleting three rendered backends lets the three oldest waiting in, and
  // no other.
  auto del = Kubectl({"delete", "psb", "-n", be_ns, "--wait=false", Name(0), Name(1), Name(2)});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  auto moved = [&] {
    for (int i = fit; i < fit + 3; ++i) {
      if (ReadyStatus(Get("psb", be_ns, Name(i))) != "True") return false;
    }
    return true;
  };
  EXPECT_TRUE(testing::WaitFor(moved, 120s, 1s));
  if (fit + 3 < n) {
    EXPECT_EQ(ReadyReason(Get("psb", be_ns, Name(fit + 3))), "ConfigFull");
  }
  EXPECT_LE(SecretData(srv_ns, "shared-switchboard")["switchboard.conf"].size(),
            operator_logic::kMaxSecretDataBytes);

  // One Warning event per backend left out, not one per render (the
  // recorder writes its queue, some 2,000 events here, in the background:
  // wait for it).
  std::set<std::string> warned;
  int repeated = 0;
  auto all_warned = [&] {
    auto ev = Kubectl(
        {"get", "events", "-n", be_ns, "--field-selector", "reason=ConfigFull", "-o", "json"});
    if (ev.exit_code != 0) return false;
    warned.clear();
    repeated = 0;
    const json events = json::parse(ev.out, nullptr, false);
    for (const auto& e : events.value("items", json::array())) {
      repeated += e.value("count", 1) != 1;
      warned.insert(e["involvedObject"].value("name", ""));
    }
    return warned.size() == static_cast<size_t>(n - fit);
  };
  EXPECT_TRUE(testing::WaitFor(all_warned, 300s, 5s)) << warned.size() << " of " << n - fit;
  EXPECT_EQ(repeated, 0);

  if (HasFailure()) std::cerr << "operator log tail:\n" << log_tail() << "\n";
  op.reset();
  AbandonNamespace(be_ns);
  AbandonNamespace(srv_ns);
  sync.Stop();
}

}  // namespace
}  // namespace switchboard::e2e
