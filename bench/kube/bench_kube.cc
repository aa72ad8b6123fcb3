// Benchmarks of the kube client's hot paths. Pure parts always run; client
// round trips run only when SWITCHBOARD_KUBECONFIG points at a cluster
// (eval "$(scripts/cluster.sh env)"), comparing a pooled keep-alive
// connection with a fresh TLS connection per call side by side.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <thread>

#include "switchboard/kube/client.h"
#include "switchboard/kube/store.h"
#include "switchboard/kube/watch.h"
#include "switchboard/kube/workqueue.h"

namespace switchboard::kube {
namespace {

json SampleObject(int i, size_t data_bytes) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", "cm-" + std::to_string(i)},
            {"namespace", "bench"},
            {"resourceVersion", std::to_string(1000 + i)},
            {"uid", "6f1c2a9e-0000-4000-8000-" + std::to_string(100000000000 + i)},
            {"labels", {{"app", "hatchet"}, {"tier", "engine"}}}}},
          {"data", {{"payload", std::string(data_bytes, 'x')}}}};
}

// Decoding a watch stream: chunks of 16 KiB, ~1 KiB objects.
void BM_WatchDecode(benchmark::State& state) {
  std::string stream;
  const int kEvents = 1000;
  for (int i = 0; i < kEvents; ++i) {
    stream += json{{"type", "MODIFIED"}, {"object", SampleObject(i, 800)}}.dump();
    stream += "\n";
  }
  for (auto _ : state) {
    WatchLineDecoder d;
    int n = 0;
    for (size_t off = 0; off < stream.size(); off += 16384) {
      d.Feed(std::string_view(stream).substr(off, 16384), [&](std::string_view line) {
        auto ev = ParseWatchEvent(line);
        benchmark::DoNotOptimize(ev);
        ++n;
        return true;
      });
    }
    if (n != kEvents) state.SkipWithError("lost events");
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(stream.size()));
}
BENCHMARK(BM_WatchDecode);

void BM_StoreUpsert(benchmark::State& state) {
  Store s;
  std::vector<json> objs;
  for (int i = 0; i < 1000; ++i) objs.push_back(SampleObject(i, 100));
  size_t i = 0;
  for (auto _ : state) {
    s.Upsert(objs[i++ % objs.size()]);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreUpsert);

void BM_StoreListSnapshot(benchmark::State& state) {
  Store s;
  std::vector<json> objs;
  for (int i = 0; i < state.range(0); ++i) objs.push_back(SampleObject(i, 100));
  s.Replace(objs);
  for (auto _ : state) {
    auto snap = s.List();
    benchmark::DoNotOptimize(snap);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_StoreListSnapshot)->Arg(100)->Arg(10000);

// One Add + Get + Done cycle, single thread (queue overhead per reconcile).
void BM_WorkQueueCycle(benchmark::State& state) {
  WorkQueue q;
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) keys.push_back("ns/name-" + std::to_string(i));
  size_t i = 0;
  for (auto _ : state) {
    q.Add(keys[i++ % keys.size()]);
    auto k = q.Get();
    q.Done(*k);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WorkQueueCycle);

void BM_BuildApplyRequest(benchmark::State& state) {
  json obj = SampleObject(1, 200);
  ApplyOptions o;
  o.field_manager = "switchboard-operator";
  for (auto _ : state) {
    auto r = request::Apply(resources::ConfigMap(), obj, o);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuildApplyRequest);

// --- against a real API server (optional) ---

std::unique_ptr<Client> ClusterClient() {
  const char* kc = std::getenv("SWITCHBOARD_KUBECONFIG");
  if (kc == nullptr) return nullptr;
  auto cfg = Config::FromKubeconfig(kc);
  if (!cfg.ok()) return nullptr;
  auto c = Client::New(cfg.value());
  return c.ok() ? std::move(c.value()) : nullptr;
}

void BM_GetPooledConnection(benchmark::State& state) {
  auto c = ClusterClient();
  if (!c) return state.SkipWithError("SWITCHBOARD_KUBECONFIG not set");
  for (auto _ : state) {
    auto r = c->Get(resources::Namespace(), "", "default");
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_GetFreshConnection(benchmark::State& state) {
  const char* kc = std::getenv("SWITCHBOARD_KUBECONFIG");
  if (kc == nullptr) return state.SkipWithError("SWITCHBOARD_KUBECONFIG not set");
  auto cfg = Config::FromKubeconfig(kc);
  for (auto _ : state) {
    auto c = Client::New(cfg.value());  // new transport: new TCP + TLS handshake
    auto r = (*c)->Get(resources::Namespace(), "", "default");
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ApplyUnchanged(benchmark::State& state) {
  auto c = ClusterClient();
  if (!c) return state.SkipWithError("SWITCHBOARD_KUBECONFIG not set");
  json obj = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", "bench-apply"}, {"namespace", "default"}}},
              {"data", {{"k", "v"}}}};
  ApplyOptions o;
  o.field_manager = "bench";
  for (auto _ : state) {
    auto r = c->Apply(resources::ConfigMap(), obj, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}

void RegisterClusterBenchmarks() {
  if (std::getenv("SWITCHBOARD_KUBECONFIG") == nullptr) return;
  benchmark::RegisterBenchmark("BM_GetPooledConnection", BM_GetPooledConnection)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_GetFreshConnection", BM_GetFreshConnection)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_ApplyUnchanged", BM_ApplyUnchanged)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace switchboard::kube

int main(int argc, char** argv) {
  switchboard::kube::RegisterClusterBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
