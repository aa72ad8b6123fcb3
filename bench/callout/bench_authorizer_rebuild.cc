// bench_authorizer_rebuild: the CPU of one authorizer rebuild (what is
// served for a NatsServer, its Directory of N installations) from the
// authorizer's caches, in one process, no cluster. N installations as the
// API server shows them (the operator's builders: the backend, its
// credentials and env Secrets; plus the callout Secret) are fed to the
// cache as the watchers feed it (a masked parse, item by item), then the
// rebuild runs --rounds times; the CPU time (CLOCK_PROCESS_CPUTIME_ID) of
// each is printed as min / median / max, and the cache's feeding once.
//
//   bench_authorizer_rebuild [--installations 10000] [--rounds 7]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "switchboard/authorizer/installations.h"
#include "switchboard/authorizer/served.h"
#include "switchboard/kube/field_mask.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/secrets.h"

namespace {

namespace logic = switchboard::operator_logic;
namespace authorizer = switchboard::authorizer;
namespace kube = switchboard::kube;
using nlohmann::json;

constexpr const char* kNs = "bench";

double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// What the API server adds to a stored object.
json Served(json o, int i, const char* kind) {
  auto& m = o["metadata"];
  m["uid"] = std::string(kind) + "-uid-" + std::to_string(i);
  m["resourceVersion"] = std::to_string(1000 + i);
  m["creationTimestamp"] = "2026-12-01T10:00:00Z";
  m["managedFields"] = json::array({{{"manager", "switchboard-operator"},
                                     {"operation", "Update"},
                                     {"fieldsV1", {{"f:data", {}}}}}});
  return o;
}

json Server() {
  return {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
          {"kind", "NatsServer"},
          {"metadata", {{"namespace", kNs}, {"name", "shared"}, {"uid", "server-uid"}}},
          {"spec", {{"url", "nats://n:4222"}, {"provisioning", {{"mode", "AuthCallout"}}}}}};
}

json Backend(int i) {
  const std::string name = "b" + std::to_string(i);
  json b = {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "PubSubBackend"},
      {"metadata", {{"namespace", kNs}, {"name", name}}},
      {"spec",
       {{"kind", "nats"},
        {"nats", {{"serverRef", {{"name", "shared"}}}, {"subjectPrefix", "hatchet." + name}}}}},
      {"status",
       {{"observedGeneration", 1},
        {"conditions", json::array({{{"type", "Ready"},
                                     {"status", "True"},
                                     {"reason", "Provisioned"},
                                     {"message", "credentials authenticate"}}})}}}};
  return Served(b, i, "backend");
}

}  // namespace

int main(int argc, char** argv) {
  int n = 10000, rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--installations") == 0) n = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  const std::string hash = *logic::BcryptHash("p", 4);
  std::vector<json> backends, secrets;
  for (int i = 0; i < n; i++) {
    json b = Backend(i);
    const std::string name = b["metadata"]["name"], uid = b["metadata"]["uid"];
    logic::CredentialState c;
    c.current = {name + "-user", "generated-password-" + std::to_string(i) + "-0123456789abcdefgh",
                 hash};
    secrets.push_back(Served(logic::CredentialsSecret({kNs, name, uid}, c), i, "credentials"));
    secrets.push_back(
        Served(logic::EnvSecret({kNs, name, uid}, name + "-pubsub-env",
                                logic::NatsEnv("nats://n:4222", c.current.username,
                                               c.current.password, "hatchet." + name)),
               i, "env"));
    backends.push_back(std::move(b));
  }
  auto issuer = switchboard::natsauth::KeyPair::Generate(switchboard::natsauth::KeyType::kAccount);
  logic::CalloutKeys keys;
  keys.issuer_seed = issuer->Seed();
  keys.issuer = issuer->public_key();
  keys.authorizer = {"switchboard-authorizer", "pa", hash};
  keys.system = {"switchboard-system", "ps", hash};
  secrets.push_back(
      Served(logic::CalloutSecret({kNs, "shared", "server-uid"}, "shared-auth-callout",
                                  logic::EncodeCalloutKeys(keys)),
             0, "callout"));
  const json server = Server();

  // The cache, fed as the watchers feed it.
  const double fed_at = CpuMs();
  authorizer::InstallationCache cache;
  const kube::FieldMask backend_mask = authorizer::BackendFields(),
                        secret_mask = authorizer::SecretFields();
  for (const json& b : backends) {
    kube::WatcherEvent ev;
    ev.object = kube::ParseMasked(b.dump(), backend_mask);
    cache.OnBackendEvent(ev, "");
  }
  for (const json& s : secrets) {
    kube::WatcherEvent ev;
    ev.object = kube::ParseMasked(s.dump(), secret_mask);
    cache.OnSecretEvent(ev, "");
  }
  const double fed_ms = CpuMs() - fed_at;

  std::vector<double> ms;
  for (int r = 0; r < rounds; r++) {
    const double t0 = CpuMs();
    auto built = authorizer::BuildServedServer(
        server, cache.Records(),
        [&](std::string_view ns, std::string_view name) { return cache.Callout(ns, name); });
    ms.push_back(CpuMs() - t0);
    if (!built.ok() || built->directory->by_user.size() != static_cast<size_t>(n)) {
      std::fprintf(stderr, "the directory is not complete: %s\n",
                   built.ok() ? std::to_string(built->directory->by_user.size()).c_str()
                              : built.status().ToString().c_str());
      return 1;
    }
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "installations %d: rebuild CPU ms min %.1f median %.1f max %.1f (%d rounds); "
      "feeding the cache %.0f ms\n",
      n, ms.front(), ms[ms.size() / 2], ms.back(), rounds, fed_ms);
  return 0;
}
