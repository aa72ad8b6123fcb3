#include "switchboard/pubsub/compression.h"

#include <libdeflate.h>

#include <algorithm>
#include <memory>

namespace switchboard::pubsub {
namespace {

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// libdeflate (de)compressors are not thread-safe but cheap to keep: one per
// thread and level.
libdeflate_compressor* ThreadCompressor(int level) {
  thread_local std::unique_ptr<libdeflate_compressor, CompressorDeleter> c;
  thread_local int c_level = -1;
  if (!c || c_level != level) {
    c.reset(libdeflate_alloc_compressor(level));
    c_level = level;
  }
  return c.get();
}

libdeflate_decompressor* ThreadDecompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(
      libdeflate_alloc_decompressor());
  return d.get();
}

std::string TooLarge(size_t max_output) {
  return "gzip payload decompresses to more than " + std::to_string(max_output) +
         " bytes (the decompression cap); refusing it (corrupt data or a gzip bomb)";
}

}  // namespace

std::string GzipCompress(std::string_view data, int level) {
  if (level < 0 || level > 12) level = 1;
  libdeflate_compressor* c = ThreadCompressor(level);
  std::string out;
  out.resize(libdeflate_gzip_compress_bound(c, data.size()));
  size_t n = libdeflate_gzip_compress(c, data.data(), data.size(), out.data(), out.size());
  out.resize(n);
  return out;
}

Result<std::string> GzipDecompress(std::string_view data, size_t max_output) {
  libdeflate_decompressor* d = ThreadDecompressor();
  std::string out;
  // Start from the size the (last) member's trailer claims, bounded by the
  // cap; grow by doubling when it lied or there are several members.
  size_t guess = data.size() * 4 + 64;
  if (data.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(data.data() + data.size() - 4);
    size_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (size_t{t[3]} << 24);
    guess = std::max(guess, isize);
  }
  // DEFLATE expands at most ~1032:1, so a trailer claiming more than the
  // input could produce is a lie: never allocate beyond what is possible.
  guess = std::min({guess, data.size() * 1032 + 1024, max_output});
  size_t produced = 0;
  std::string_view in = data;
  if (in.empty()) return Status::InvalidArgument("gzip payload is empty");
  while (!in.empty()) {
    size_t capacity = std::max(guess, produced + 64);
    while (true) {
      capacity = std::min(capacity, max_output);
      out.resize(capacity);
      size_t in_used = 0, out_used = 0;
      auto r = libdeflate_gzip_decompress_ex(d, in.data(), in.size(), out.data() + produced,
                                             capacity - produced, &in_used, &out_used);
      if (r == LIBDEFLATE_SUCCESS) {
        produced += out_used;
        in.remove_prefix(in_used);
        break;
      }
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
        if (capacity >= max_output) return Status::ResourceExhausted(TooLarge(max_output));
        capacity *= 2;
        continue;
      }
      return Status::InvalidArgument("payload marked compressed is not valid gzip data");
    }
  }
  out.resize(produced);
  return out;
}

std::optional<std::string> GzipCompressIfSmaller(std::string_view data, int level) {
  // A gzip member has 18 bytes of header and trailer: nothing this short
  // can shrink.
  if (data.size() <= 18) return std::nullopt;
  if (level < 0 || level > 12) level = 1;
  libdeflate_compressor* c = ThreadCompressor(level);
  // Output room: the input size plus libdeflate's end padding (it writes
  // whole 8-byte words and gives up, returning 0, when less than that is
  // left), not gzip's worst-case bound: a stream that would not fit is not
  // smaller anyway. Payloads up to 1 MiB go through a per-thread buffer so
  // only the result is allocated; bigger ones get their own buffer so that
  // one is not kept for the thread's life.
  constexpr size_t kPadding = 16;
  constexpr size_t kReusedBufferLimit = 1 << 20;
  thread_local std::string scratch;
  auto room = [&](size_t n) {
    if (scratch.size() < n) scratch.resize(n);
    return scratch.data();
  };
  if (data.size() >= kSampledFrom) {
    // Gzip the first kSample bytes first. When not even they shrink, the
    // payload is all but certainly incompressible (random, encrypted or
    // already compressed), and gzipping all of it would only confirm that
    // at full cost (1 MiB of random bytes: ~8 ms against ~0.07 ms here).
    // The price: a payload whose head does not compress but whose rest
    // would is sent uncompressed, which is never larger.
    size_t n = libdeflate_gzip_compress(c, data.data(), kSample, room(kSample + kPadding),
                                        kSample + kPadding);
    if (n == 0 || n >= kSample) return std::nullopt;
  }
  const size_t avail = data.size() + kPadding;
  if (data.size() <= kReusedBufferLimit) {
    char* out = room(avail);
    size_t n = libdeflate_gzip_compress(c, data.data(), data.size(), out, avail);
    if (n == 0 || n >= data.size()) return std::nullopt;
    return std::string(out, n);
  }
  std::string out;
  out.resize(avail);
  size_t n = libdeflate_gzip_compress(c, data.data(), data.size(), out.data(), avail);
  if (n == 0 || n >= data.size()) return std::nullopt;
  out.resize(n);
  out.shrink_to_fit();
  return out;
}

std::optional<std::vector<std::string>> GzipPayloadsIfSmaller(
    const std::vector<std::string>& payloads, int level) {
  std::vector<std::string> out;
  out.reserve(payloads.size());
  for (const auto& p : payloads) {
    auto gz = GzipCompressIfSmaller(p, level);
    if (!gz) return std::nullopt;  // stop early: the message goes uncompressed anyway
    out.push_back(std::move(*gz));
  }
  return out;
}

std::optional<Message> TryCompressMessage(const Message& message, size_t threshold, int level) {
  if (message.compressed || !message.payloads || message.PayloadBytes() < threshold) {
    return std::nullopt;
  }
  auto gz = GzipPayloadsIfSmaller(*message.payloads, level);
  if (!gz) return std::nullopt;
  // Every field but the payloads, so the originals are never copied (the
  // round-trip test with every field set catches a field missing here).
  Message out;
  out.id = message.id;
  out.payloads = std::move(*gz);
  out.tenant_id = message.tenant_id;
  out.immediately_expire = message.immediately_expire;
  out.persistent = message.persistent;
  out.otel_carrier = message.otel_carrier;
  out.retries = message.retries;
  out.compressed = true;
  out.published_at = message.published_at;
  return out;
}

Message CompressMessage(const Message& message, size_t threshold, int level) {
  auto compressed = TryCompressMessage(message, threshold, level);
  return compressed ? std::move(*compressed) : message;
}

Status DecompressMessage(Message* message, size_t max_output) {
  if (!message->compressed) return Status::Ok();
  if (message->payloads) {
    size_t total = 0;
    for (size_t i = 0; i < message->payloads->size(); ++i) {
      auto& p = (*message->payloads)[i];
      auto r = GzipDecompress(p, max_output - total);
      if (!r.ok()) return r.status().Annotate("messages[" + std::to_string(i) + "]");
      total += r->size();
      p = std::move(r).value();
    }
  }
  message->compressed = false;
  return Status::Ok();
}

}  // namespace switchboard::pubsub
