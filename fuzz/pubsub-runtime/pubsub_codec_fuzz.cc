// Fuzzes the decoder with arbitrary bytes. Properties: never crashes; a
// decoded message re-encodes to text that decodes to the same message and
// re-encodes to the same bytes (Go's encoding is a fixed point); gzip
// decompression of arbitrary bytes stays within its cap; compression on
// publish never returns a stream that is not smaller than its input, and
// what it returns decompresses to the input.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/compression.h"

namespace ps = switchboard::pubsub;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto decoded = ps::DecodeMessage(input);
  if (decoded.ok()) {
    std::string once = ps::EncodeMessage(*decoded);
    if (ps::EncodedSize(*decoded) != once.size()) std::abort();
    auto again = ps::DecodeMessage(once);
    if (!again.ok()) std::abort();
    if (ps::EncodeMessage(*again) != once) std::abort();
  }
  constexpr size_t kCap = 1 << 20;
  auto gunzipped = ps::GzipDecompress(input, kCap);
  if (gunzipped.ok() && gunzipped->size() > kCap) std::abort();
  if (auto gz = ps::GzipCompressIfSmaller(input)) {
    if (gz->size() >= input.size()) std::abort();
    auto back = ps::GzipDecompress(*gz, input.size());
    if (!back.ok() || *back != input) std::abort();
  }
  return 0;
}
