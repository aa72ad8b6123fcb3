// Render cost for one NatsServer with many installations, with hashes
// precomputed (as the operator keeps them in credentials Secrets), and the
// per-password costs (bcrypt, CSPRNG) that happen once per password.
//
//   build/bin/bench_render                  # everything
//   build/bin/bench_render --benchmark_filter=Render
#include <benchmark/benchmark.h>

#include <cstdio>

#include "switchboard/api/limits.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::operator_logic {
namespace {

// A syntactically valid bcrypt string per index (render never checks a
// password against it; content does not change the cost).
std::string FakeHash(int i) {
  static constexpr char kAlphabet[] =
      "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string h = "$2b$11$";
  unsigned v = static_cast<unsigned>(i) * 2654435761u;
  for (int k = 0; k < 53; ++k) {
    h.push_back(kAlphabet[(v >> (k % 26)) % 64]);
  }
  return h;
}

// `n` installations in namespaces ns-0..ns-(n-1), in reverse order so the
// sort does real work; every `rotating_every`-th one carries two users.
RenderInput MakeInput(int n, Isolation isolation, int rotating_every = 0) {
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.isolation = isolation;
  in.max_bytes = std::nullopt;  // the render's own cost, beyond one Secret's 1 MiB
  in.installations.reserve(n);
  for (int i = n - 1; i >= 0; --i) {
    std::string ns = "team-" + std::to_string(i);
    Installation inst{ns, "hatchet", "hatchet." + ns, {{ns + "-hatchet", FakeHash(i)}}};
    if (rotating_every > 0 && i % rotating_every == 0) {
      inst.users.insert(inst.users.begin(), {ns + "-hatchet-r1", FakeHash(i + n)});
    }
    in.installations.push_back(std::move(inst));
  }
  return in;
}

void RenderBench(benchmark::State& state, Isolation isolation, int rotating_every) {
  const RenderInput in = MakeInput(static_cast<int>(state.range(0)), isolation, rotating_every);
  size_t bytes = 0;
  for (auto _ : state) {
    auto r = RenderNatsConfig(in);
    if (!r.ok() || r->installations != state.range(0)) {
      state.SkipWithError("render failed");
      break;
    }
    bytes = r->text.size();
    benchmark::DoNotOptimize(r->hash);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["installations/s"] = benchmark::Counter(
      static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_RenderPermissions(benchmark::State& s) { RenderBench(s, Isolation::kPermissions, 0); }
void BM_RenderAccounts(benchmark::State& s) { RenderBench(s, Isolation::kAccounts, 0); }
// 10% of installations mid-rotation (two users each).
void BM_RenderPermissionsRotating(benchmark::State& s) {
  RenderBench(s, Isolation::kPermissions, 10);
}
BENCHMARK(BM_RenderPermissions)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RenderAccounts)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RenderPermissionsRotating)->Arg(10000)->Unit(benchmark::kMillisecond);

// How many installations the 1 MiB config Secret holds (RenderInput's
// default ceiling and reserve), with names as tenants choose them:
// namespace "tenant-<8 hex>-production", backend "hatchet-engine", the
// default user and a prefix per tenant (tests/operator/logic's ceiling
// test uses the same shape). Arg 0: Permissions; 1: Accounts; 2: Accounts
// with every limit set at its widest (the longest `limits {}` block).
// Reported as the counter "fit"; the time is one render at the ceiling.
void BM_FitAtCeiling(benchmark::State& state) {
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.isolation = state.range(0) == 0 ? Isolation::kPermissions : Isolation::kAccounts;
  constexpr int kTenants = 4000;  // more than any variant fits
  for (int i = 0; i < kTenants; ++i) {
    char ns[48];
    std::snprintf(ns, sizeof ns, "tenant-%08x-production", static_cast<unsigned>(i) * 2654435761u);
    Installation inst{ns,
                      "hatchet-engine",
                      std::string("hatchet.") + ns,
                      {{std::string(ns) + "-hatchet-engine", FakeHash(i)}}};
    inst.created = 1793000000 + i;
    if (state.range(0) == 2) {
      inst.limits = {api::kMaxInstallationConnections, api::kMaxInstallationSubscriptions,
                     api::kNatsMaxPayloadLimit};
    }
    in.installations.push_back(std::move(inst));
  }
  int fit = 0;
  for (auto _ : state) {
    auto r = RenderNatsConfig(in);
    if (!r.ok()) {
      state.SkipWithError("render failed");
      break;
    }
    fit = r->installations;
  }
  state.counters["fit"] = fit;
}
BENCHMARK(BM_FitAtCeiling)
    ->ArgName("variant")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);

// What a steady-state reconcile of one backend costs in the pure core:
// credentials plan (no hashing) + env data + env hash.
void BM_SteadyStatePlan(benchmark::State& state) {
  CredentialState stored;
  stored.current = {"team-a-hatchet", GeneratePassword().value(), FakeHash(1)};
  CredentialInputs in;
  in.username = "team-a-hatchet";
  in.env_username = "team-a-hatchet";
  in.now = Clock::now();
  for (auto _ : state) {
    auto plan = PlanCredentials(stored, in);
    auto env = NatsEnv("nats://nats:4222", plan->env.username, plan->env.password, "hatchet.a");
    benchmark::DoNotOptimize(EnvHash(env));
  }
}
BENCHMARK(BM_SteadyStatePlan)->Unit(benchmark::kMicrosecond);

// Once per new password (and, on the NATS side, once per client connect:
// the server checks the password against the hash at the hash's cost).
void BM_BcryptHash(benchmark::State& state) {
  const int cost = static_cast<int>(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(BcryptHash("0123456789abcdef0123456789abcdef", cost));
  }
}
BENCHMARK(BM_BcryptHash)
    ->ArgName("cost")
    ->Arg(4)
    ->Arg(6)
    ->Arg(8)
    ->Arg(10)
    ->Arg(11)
    ->Unit(benchmark::kMillisecond);

// Once per adoption of an external password without a stored copy.
void BM_BcryptVerifyCost11(benchmark::State& state) {
  const std::string hash = BcryptHash("pw").value();
  for (auto _ : state) benchmark::DoNotOptimize(BcryptVerify("pw", hash));
}
BENCHMARK(BM_BcryptVerifyCost11)->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_GeneratePassword(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(GeneratePassword());
}
BENCHMARK(BM_GeneratePassword)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace switchboard::operator_logic

BENCHMARK_MAIN();
