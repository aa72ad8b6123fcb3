// gzip benchmarks on both payload shapes (payloads.h): random bytes, as in
// Hatchet's BenchmarkCompressPayloads, and JSON-like text.
//
//   CompressPayloads/<shape>/<n>x<size>        what a publish with compression
//       on costs: TryCompressMessage, every payload gzipped at level 1 and
//       the message sent uncompressed when one does not shrink. Compare with
//       go/ (Hatchet's CompressPayloads on Go's compress/gzip) via go/run.sh.
//   CompressPayloads_SameBytesEachIteration/...  the old method (one set of
//       bytes compressed again and again), kept to show what it got wrong.
//   GzipEachPayload/<shape>/<n>x<size>/<lib>-<level>  raw gzip per payload:
//       libdeflate (used) against zlib, at levels 1 and 6.
//   GunzipEachPayload/json/<n>x<size>/<lib>     decompression of level-1 streams.
//
// CPU time is the process's (MeasureProcessCPUTime), like the Go side's.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdio>
#include <string>
#include <vector>

#include "payloads.h"
#include "switchboard/pubsub/compression.h"

namespace ps = switchboard::pubsub;
namespace sb = switchboard::bench;

namespace {

struct Size {
  size_t count, kib;
  std::string Name() const { return std::to_string(count) + "x" + std::to_string(kib) + "KiB"; }
};

std::vector<ps::Message> Messages(sb::Shape shape, Size size) {
  std::vector<ps::Message> out;
  for (auto& set : sb::PayloadSets(shape, size.count, size.kib * 1024)) {
    ps::Message m;
    m.id = "task-stream-event";
    m.payloads = std::move(set);
    out.push_back(std::move(m));
  }
  return out;
}

// `rotate` false: compress the first set every iteration (the old method).
void CompressPayloads(benchmark::State& state, sb::Shape shape, Size size, bool rotate) {
  std::vector<ps::Message> messages = Messages(shape, size);
  const uint32_t fnv = sb::Fnv32((*messages[0].payloads)[0]);
  size_t k = 0, in_bytes = 0, out_bytes = 0, compressed = 0;
  for (auto _ : state) {
    const ps::Message& m = messages[rotate ? k++ % messages.size() : 0];
    auto c = ps::TryCompressMessage(m, 0);
    in_bytes += m.PayloadBytes();
    out_bytes += c ? c->PayloadBytes() : m.PayloadBytes();
    compressed += c ? 1 : 0;
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<int64_t>(in_bytes));
  state.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(in_bytes);
  state.counters["compressed"] =
      static_cast<double>(compressed) / static_cast<double>(state.iterations());
  state.SetLabel("fnv32=" + std::to_string(fnv));  // a label: counters print 6 digits
  state.counters["sets"] = static_cast<double>(rotate ? messages.size() : 1);
}

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

void GzipEachPayload(benchmark::State& state, sb::Shape shape, Size size, bool zlib, int level) {
  auto sets = sb::PayloadSets(shape, size.count, size.kib * 1024);
  size_t k = 0, in_bytes = 0, out_bytes = 0;
  for (auto _ : state) {
    for (const auto& p : sets[k++ % sets.size()]) {
      std::string gz = zlib ? ZlibGzip(p, level) : ps::GzipCompress(p, level);
      in_bytes += p.size();
      out_bytes += gz.size();
      benchmark::DoNotOptimize(gz.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(in_bytes));
  state.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(in_bytes);
}

void GunzipEachPayload(benchmark::State& state, Size size, bool zlib) {
  auto sets = sb::PayloadSets(sb::Shape::kJson, size.count, size.kib * 1024);
  std::vector<std::vector<std::string>> gz(sets.size());
  for (size_t k = 0; k < sets.size(); ++k) {
    for (const auto& p : sets[k]) gz[k].push_back(ps::GzipCompress(p, 1));
  }
  size_t k = 0, out_bytes = 0;
  for (auto _ : state) {
    for (const auto& g : gz[k++ % gz.size()]) {
      if (zlib) {
        auto out = ZlibGunzip(g, size.kib * 1024);
        out_bytes += out.size();
        benchmark::DoNotOptimize(out.data());
      } else {
        auto out = ps::GzipDecompress(g, 64u << 20);
        out_bytes += out.ok() ? out->size() : 0;
        benchmark::DoNotOptimize(out);
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(out_bytes));
}

void Register() {
  const sb::Shape shapes[] = {sb::Shape::kRandom, sb::Shape::kJson};
  const Size compress_sizes[] = {{1, 10}, {10, 10}, {100, 10}, {10, 100}};
  for (sb::Shape shape : shapes) {
    for (Size size : compress_sizes) {
      std::string name =
          std::string("CompressPayloads/") + sb::ShapeName(shape) + "/" + size.Name();
      benchmark::RegisterBenchmark(name.c_str(), CompressPayloads, shape, size, true)
          ->MeasureProcessCPUTime();
    }
  }
  for (Size size : {Size{1, 10}, Size{10, 10}}) {
    std::string name = "CompressPayloads_SameBytesEachIteration/json/" + size.Name();
    benchmark::RegisterBenchmark(name.c_str(), CompressPayloads, sb::Shape::kJson, size, false)
        ->MeasureProcessCPUTime();
  }
  for (sb::Shape shape : shapes) {
    for (Size size : compress_sizes) {
      for (bool zlib : {false, true}) {
        for (int level : {1, 6}) {
          std::string name = std::string("GzipEachPayload/") + sb::ShapeName(shape) + "/" +
                             size.Name() + "/" + (zlib ? "zlib-" : "libdeflate-") +
                             std::to_string(level);
          benchmark::RegisterBenchmark(name.c_str(), GzipEachPayload, shape, size, zlib, level)
              ->MeasureProcessCPUTime();
        }
      }
    }
  }
  for (Size size : {Size{1, 10}, Size{10, 10}, Size{10, 100}}) {
    for (bool zlib : {false, true}) {
      std::string name =
          "GunzipEachPayload/json/" + size.Name() + "/" + (zlib ? "zlib" : "libdeflate");
      benchmark::RegisterBenchmark(name.c_str(), GunzipEachPayload, size, zlib)
          ->MeasureProcessCPUTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
