// Codec and gzip benchmarks (Hatchet's own benchmark shapes for gzip:
// 1x10 KiB, 10x10 KiB, 10x100 KiB random payloads). gzip is measured with
// libdeflate (what the runtime uses) and zlib side by side at levels 1 and
// 6 (Go's gzip default); ratios come from one run on the same machine.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <random>

#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/compression.h"

namespace ps = switchboard::pubsub;

namespace {

std::string Random(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(g());
  return s;
}

// Random-looking JSON-ish text compresses like real payloads (random bytes
// do not compress at all, which would make gzip a copy benchmark).
std::string JsonLike(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  static const char* words[] = {"\"task_id\":",
                                "\"status\":\"COMPLETED\"",
                                "\"output\":",
                                "{",
                                "}",
                                ",",
                                "\"step\":",
                                "12345",
                                "true",
                                "\"abc\"",
                                " "};
  std::string s;
  while (s.size() < n) {
    s += words[g() % 11];
    s += std::to_string(g() % 100000);
  }
  s.resize(n);
  return s;
}

ps::Message Small() {
  ps::Message m;
  m.id = "task-completed";
  m.tenant_id = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  m.payloads =
      std::vector<std::string>{R"({"task_id":"abc","status":"COMPLETED","output":{"ok":true}})"};
  m.otel_carrier = std::map<std::string, std::string>{
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  m.retries = 1;
  m.published_at = ps::Timestamp::Now();
  return m;
}

ps::Message Big() {
  ps::Message m = Small();
  m.payloads = std::vector<std::string>{Random(8u << 20, 1)};
  return m;
}

void BM_EncodeSmall(benchmark::State& state) {
  ps::Message m = Small();
  std::string out;
  for (auto _ : state) {
    out.clear();
    ps::EncodeMessageTo(m, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}
BENCHMARK(BM_EncodeSmall);

void BM_DecodeSmall(benchmark::State& state) {
  std::string json = ps::EncodeMessage(Small());
  for (auto _ : state) {
    auto m = ps::DecodeMessage(json);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_DecodeSmall);

void BM_Encode8MiB(benchmark::State& state) {
  ps::Message m = Big();
  std::string out;
  for (auto _ : state) {
    out.clear();
    ps::EncodeMessageTo(m, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (8u << 20)));
}
BENCHMARK(BM_Encode8MiB)->Unit(benchmark::kMillisecond);

void BM_Decode8MiB(benchmark::State& state) {
  std::string json = ps::EncodeMessage(Big());
  for (auto _ : state) {
    auto m = ps::DecodeMessage(json);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (8u << 20)));
}
BENCHMARK(BM_Decode8MiB)->Unit(benchmark::kMillisecond);

// Encode + decode of the 8 MiB message: the ">= 1 GB/s" target.
void BM_EncodeDecode8MiB(benchmark::State& state) {
  ps::Message m = Big();
  std::string out;
  for (auto _ : state) {
    out.clear();
    ps::EncodeMessageTo(m, &out);
    auto back = ps::DecodeMessage(out);
    benchmark::DoNotOptimize(back);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (8u << 20)));
}
BENCHMARK(BM_EncodeDecode8MiB)->Unit(benchmark::kMillisecond);

std::string ZlibGzip(const std::string& in, int level) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string ZlibGunzip(const std::string& in, size_t size) {
  z_stream z{};
  inflateInit2(&z, 16 + MAX_WBITS);
  std::string out(size, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  inflate(&z, Z_FINISH);
  inflateEnd(&z);
  return out;
}

// args: payload count, payload KiB, level, library (0 libdeflate, 1 zlib)
void BM_Gzip(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0)), kib = static_cast<size_t>(state.range(1));
  int level = static_cast<int>(state.range(2));
  bool zlib = state.range(3) == 1;
  std::vector<std::string> payloads;
  for (size_t i = 0; i < n; ++i) payloads.push_back(JsonLike(kib * 1024, i + 1));
  size_t out_bytes = 0;
  for (auto _ : state) {
    out_bytes = 0;
    for (const auto& p : payloads) {
      std::string gz = zlib ? ZlibGzip(p, level) : ps::GzipCompress(p, level);
      out_bytes += gz.size();
      benchmark::DoNotOptimize(gz.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * kib * 1024));
  state.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(n * kib * 1024);
  state.SetLabel(std::string(zlib ? "zlib" : "libdeflate") + " level " + std::to_string(level));
}
BENCHMARK(BM_Gzip)
    ->ArgNames({"n", "KiB", "level", "zlib"})
    ->ArgsProduct({{1}, {10}, {1, 6}, {0, 1}})
    ->ArgsProduct({{10}, {10}, {1, 6}, {0, 1}})
    ->ArgsProduct({{10}, {100}, {1, 6}, {0, 1}});

void BM_Gunzip(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0)), kib = static_cast<size_t>(state.range(1));
  bool zlib = state.range(2) == 1;
  std::vector<std::string> gz;
  for (size_t i = 0; i < n; ++i) gz.push_back(ps::GzipCompress(JsonLike(kib * 1024, i + 1), 1));
  for (auto _ : state) {
    for (const auto& g : gz) {
      if (zlib) {
        auto out = ZlibGunzip(g, kib * 1024);
        benchmark::DoNotOptimize(out.data());
      } else {
        auto out = ps::GzipDecompress(g, 64u << 20);
        benchmark::DoNotOptimize(out);
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * kib * 1024));
  state.SetLabel(zlib ? "zlib" : "libdeflate");
}
BENCHMARK(BM_Gunzip)->ArgNames({"n", "KiB", "zlib"})->ArgsProduct({{1, 10}, {10, 100}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
