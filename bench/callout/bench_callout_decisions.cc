// What one CONNECT costs the authorizer, beside what it costs nats-server
// in file mode (a bcrypt check of the password against the include file's
// hash, cost 6 for generated passwords, 11 for user-chosen ones).
//
//   Decide          DecideAuthorization on a directory of 10,000
//                   installations (a constant-time compare of digests)
//   DecideAndSign   Decide + the user JWT + the authorization response,
//                   both ed25519-signed by the issuer (what goes back)
//   Request         the whole answer: decode and verify the server's
//                   request JWT (ed25519), decide, sign both tokens
//   BcryptVerify/C  operator_logic::BcryptVerify at cost C (libcrypt)
//   CollectDirectory/N  the authorizer's rebuild after any change to a
//                   watched object: the whole directory of N installations
//                   from the cached backends and credentials Secrets (how
//                   long a new Secret takes to reach the snapshot, beyond
//                   the watch)
//
// The ratio Request : BcryptVerify/6 and /11 in one run is the number to
// read; per-core figures (the benchmark runs on one thread).
//
//   build/bin/bench_callout_decisions
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "switchboard/api/names.h"
#include "switchboard/common/base64.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_logic {
namespace {

constexpr int kInstallations = 10000;
constexpr int64_t kNow = 1796160982;

std::string User(int i) { return "team-" + std::to_string(i) + "-backend"; }
std::string Password(int i) {
  return "generated-password-" + std::to_string(i) + "-0123456789abcdef";
}

const Directory& TheDirectory() {
  static const Directory d = [] {
    Directory d;
    d.server_ns = "nats";
    d.server_name = "shared";
    d.account = "HATCHET";
    for (int i = 0; i < kInstallations; i++) {
      auto record = std::make_shared<InstallationRecord>();
      record->ns = "team-" + std::to_string(i);
      record->name = "backend";
      record->subject_prefix = "hatchet." + record->ns;
      CredentialState c;
      c.current = {User(i), Password(i), ""};
      record->credentials = std::make_shared<const CredentialState>(std::move(c));
      d.Add(DirectoryEntry(std::move(record), User(i)));
    }
    return d;
  }();
  return d;
}

const natsauth::KeyPair& Issuer() {
  static const natsauth::KeyPair k =
      natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value();
  return k;
}
const natsauth::KeyPair& ServerKey() {
  static const natsauth::KeyPair k =
      natsauth::KeyPair::Generate(natsauth::KeyType::kServer).value();
  return k;
}
const natsauth::KeyPair& UserKey() {
  static const natsauth::KeyPair k = natsauth::KeyPair::Generate(natsauth::KeyType::kUser).value();
  return k;
}

Time Now() { return Time(std::chrono::seconds(kNow)); }

// The tokens an allowed decision sends back; empty on any failure.
std::string Answer(const AuthorizationDecision& d, const std::string& user_nkey,
                   const std::string& server_id) {
  natsauth::UserClaims user;
  user.claims = {
      .audience = d.account, .issued_at = kNow, .name = d.connection_name, .subject = user_nkey};
  user.pub.allow = user.sub.allow = d.allow;
  auto jwt = natsauth::EncodeUserClaims(user, Issuer());
  if (!jwt.ok()) return "";
  natsauth::AuthorizationResponseClaims response;
  response.claims = {.audience = server_id, .issued_at = kNow, .subject = user_nkey};
  response.jwt = std::move(jwt).value();
  auto out = natsauth::EncodeAuthorizationResponse(response, Issuer());
  return out.ok() ? std::move(out).value() : "";
}

// A request as nats-server 2.15 sends it for user i, signed by ServerKey().
std::string Request(int i) {
  const std::string header = R"({"typ":"JWT","alg":"ed25519-nkey"})";
  const std::string payload =
      std::string(R"({"aud":"nats-authorization-request","exp":)") + std::to_string(kNow + 5) +
      R"(,"jti":"BENCH","iat":)" + std::to_string(kNow) + R"(,"iss":")" + ServerKey().public_key() +
      R"(","sub":")" + Issuer().public_key() +
      R"(","nats":{"server_id":{"name":"s1","host":"127.0.0.1","id":")" + ServerKey().public_key() +
      R"(","version":"2.15.3"},"user_nkey":")" + UserKey().public_key() +
      R"(","client_info":{"host":"127.0.0.1","id":7,"user":")" + User(i) +
      R"(","kind":"Client","type":"nats"},"connect_opts":{"user":")" + User(i) + R"(","pass":")" +
      Password(i) +
      R"(","lang":"go","version":"1.41.1","protocol":1},"type":"authorization_request","version":2}})";
  const std::string signing = base64::EncodeUrl(header) + "." + base64::EncodeUrl(payload);
  auto sig = ServerKey().Sign(signing);
  return signing + "." + base64::EncodeUrl(sig.value());
}

void Decide(benchmark::State& state) {
  const Directory& d = TheDirectory();
  int i = 0;
  for (auto _ : state) {
    auto r = DecideAuthorization(d, User(i), Password(i), Now());
    if (r.denial != Denial::kNone) state.SkipWithError("denied");
    benchmark::DoNotOptimize(r);
    i = (i + 7919) % kInstallations;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Decide);

void DecideAndSign(benchmark::State& state) {
  const Directory& d = TheDirectory();
  const std::string server_id = ServerKey().public_key(), user_nkey = UserKey().public_key();
  int i = 0;
  for (auto _ : state) {
    auto r = DecideAuthorization(d, User(i), Password(i), Now());
    std::string out = Answer(r, user_nkey, server_id);
    if (out.empty()) state.SkipWithError("signing failed");
    benchmark::DoNotOptimize(out);
    i = (i + 7919) % kInstallations;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(DecideAndSign);

void RequestToAnswer(benchmark::State& state) {
  const Directory& d = TheDirectory();
  std::vector<std::string> requests;
  for (int i = 0; i < 64; i++) requests.push_back(Request(i * 131));
  size_t k = 0;
  for (auto _ : state) {
    auto q = natsauth::DecodeAuthorizationRequest(requests[k], kNow, Issuer().public_key());
    if (!q.ok()) {
      state.SkipWithError(q.status().ToString().c_str());
      break;
    }
    auto r = DecideAuthorization(d, q->connect_opts.user, q->connect_opts.pass, Now());
    std::string out = Answer(r, q->user_nkey, q->server_id.id);
    if (out.empty()) state.SkipWithError("denied or signing failed");
    benchmark::DoNotOptimize(out);
    k = (k + 1) % requests.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(RequestToAnswer);

void BcryptVerifyAtCost(benchmark::State& state) {
  const int cost = static_cast<int>(state.range(0));
  const std::string password = Password(1);
  const std::string hash = BcryptHash(password, cost).value();
  for (auto _ : state) {
    auto ok = BcryptVerify(password, hash);
    if (!ok.ok() || !*ok) state.SkipWithError("bcrypt verify failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BcryptVerifyAtCost)
    ->Arg(kGeneratedPasswordBcryptCost)
    ->Arg(kBcryptCost)
    ->Unit(benchmark::kMillisecond);

void CollectDirectoryOf(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const nlohmann::json server = {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "NatsServer"},
      {"metadata", {{"namespace", "bench"}, {"name", "shared"}, {"uid", "srv-uid"}}},
      {"spec", {{"url", "nats://n:4222"}, {"provisioning", {{"mode", "AuthCallout"}}}}}};
  std::vector<nlohmann::json> backends;
  std::map<std::string, nlohmann::json> secrets;
  for (int i = 0; i < n; i++) {
    const std::string name = "b" + std::to_string(i), uid = name + "-uid";
    backends.push_back(
        {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
         {"kind", "PubSubBackend"},
         {"metadata",
          {{"namespace", "bench"},
           {"name", name},
           {"uid", uid},
           {"creationTimestamp", "2026-12-01T10:00:00Z"}}},
         {"spec",
          {{"kind", "nats"},
           {"nats",
            {{"serverRef", {{"name", "shared"}}}, {"subjectPrefix", "hatchet." + name}}}}}});
    CredentialState c;
    c.current = {User(i), Password(i), "$2b$06$" + std::string(53, 'a')};
    secrets["bench/" + api::DefaultCredentialsSecretName(name)] =
        CredentialsSecret({"bench", name, uid}, c);
  }
  std::vector<const nlohmann::json*> ptrs;
  for (const auto& b : backends) ptrs.push_back(&b);
  SecretLookup lookup = [&](std::string_view ns, std::string_view name) -> const nlohmann::json* {
    auto it = secrets.find(std::string(ns) + "/" + std::string(name));
    return it == secrets.end() ? nullptr : &it->second;
  };
  for (auto _ : state) {
    auto d = CollectDirectory(server, ptrs, lookup);
    if (!d.ok() || d->by_user.size() != static_cast<size_t>(n)) {
      state.SkipWithError("the directory is not complete");
      break;
    }
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(CollectDirectoryOf)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace switchboard::operator_logic

BENCHMARK_MAIN();
