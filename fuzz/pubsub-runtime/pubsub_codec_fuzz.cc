// Fuzzes the decoder with arbitrary bytes. Properties: never crashes; a
// decoded message re-encodes to text that decodes to the same message and
// re-encodes to the same bytes (Go's encoding is a fixed point); gzip
// decompression of arbitrary bytes stays within its cap.
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
  return 0;
}
