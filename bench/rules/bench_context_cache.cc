// bench_context_cache: what one PubSubBackend change costs the next
// rules::ContextCache::Snapshot() with N backends on one server, carried
// alone (Observe: the index copied, that backend taken out and put back)
// beside the listing path every change took before (Invalidate: the cache
// listed, every object's version compared, a new index built). The operator
// takes a snapshot per reconcile, so with N new backends the listing path
// is O(N^2) in all.
//   bench_context_cache [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/rules/context_cache.h"

namespace {

using nlohmann::json;
using switchboard::rules::ContextCache;
using switchboard::rules::ObjectPtr;

json Server() {
  return json::parse(R"({"apiVersion":"pubsub.switchboard.dev/v1alpha1","kind":"NatsServer",
    "metadata":{"name":"shared","namespace":"nats","resourceVersion":"1"},
    "spec":{"url":"nats://nats:4222","allowedNamespaces":{"from":"All"}}})");
}

json Backend(int i, int version) {
  json b = json::parse(R"({"apiVersion":"pubsub.switchboard.dev/v1alpha1","kind":"PubSubBackend",
    "metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"kind":"nats","nats":{"serverRef":{"name":"shared","namespace":"nats"}}}})");
  b["metadata"]["name"] = "hatchet-" + std::to_string(i);
  b["metadata"]["namespace"] = "team-" + std::to_string(i % 100);
  b["metadata"]["resourceVersion"] = std::to_string(version);
  b["spec"]["nats"]["subjectPrefix"] = "hatchet.i" + std::to_string(i);
  return b;
}

// N backends and their server in a store-like vector, a snapshot taken.
struct Fixture {
  std::vector<ObjectPtr> objects;
  ContextCache cache{[this] { return objects; }};
  explicit Fixture(int n) {
    objects.push_back(std::make_shared<const json>(Server()));
    for (int i = 0; i < n; ++i) objects.push_back(std::make_shared<const json>(Backend(i, 10)));
    cache.Snapshot();
  }
  // Backend `i` gets status.username (what a first reconcile writes: a
  // change the rules read).
  std::pair<ObjectPtr, ObjectPtr> Change(int i, int version) {
    json b = Backend(i, version);
    b["status"]["username"] = "team-" + std::to_string(i % 100) + "-u" + std::to_string(version);
    ObjectPtr before = objects[1 + i];
    objects[1 + i] = std::make_shared<const json>(std::move(b));
    return {before, objects[1 + i]};
  }
};

void BM_SnapshotAfterOneChange_Carried(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Fixture f(n);
  int version = 100, i = 0;
  for (auto _ : state) {
    auto [before, after] = f.Change(i++ % n, ++version);
    f.cache.Observe(before.get(), after.get());
    benchmark::DoNotOptimize(f.cache.Snapshot());
  }
  state.counters["listings"] = static_cast<double>(f.cache.listings());
}

void BM_SnapshotAfterOneChange_Listed(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Fixture f(n);
  int version = 100, i = 0;
  for (auto _ : state) {
    f.Change(i++ % n, ++version);
    f.cache.Invalidate();
    benchmark::DoNotOptimize(f.cache.Snapshot());
  }
  state.counters["listings"] = static_cast<double>(f.cache.listings());
}

BENCHMARK(BM_SnapshotAfterOneChange_Carried)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SnapshotAfterOneChange_Listed)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
