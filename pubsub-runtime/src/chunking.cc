#include "switchboard/pubsub/chunking.h"

#include "switchboard/pubsub/codec.h"

namespace switchboard::pubsub {
namespace {

// Mirrors the Go engine: encode; if too large, cut the payloads into chunks
// of max(n/2, 1) and handle each chunk the same way.
Status Plan(const Message& message, int64_t max_payload, std::vector<std::string>* out) {
  size_t size = EncodedSize(message);
  if (static_cast<int64_t>(size) <= max_payload) {
    out->push_back(EncodeMessage(message));
    return Status::Ok();
  }
  size_t n = message.PayloadCount();
  if (n <= 1) {
    return Status::ResourceExhausted(
        "message \"" + message.id + "\" is " + std::to_string(size) +
        " bytes encoded with a single payload, over the server's max_payload of " +
        std::to_string(max_payload) + " bytes; a single payload cannot be split: make it smaller");
  }
  size_t chunk = std::max<size_t>(n / 2, 1);
  const auto& all = *message.payloads;
  for (size_t i = 0; i < n; i += chunk) {
    size_t end = std::min(i + chunk, n);
    Message part;
    part.id = message.id;
    part.tenant_id = message.tenant_id;
    part.immediately_expire = message.immediately_expire;
    part.persistent = message.persistent;
    part.otel_carrier = message.otel_carrier;
    part.retries = message.retries;
    part.compressed = message.compressed;
    part.published_at = message.published_at;
    part.payloads.emplace(all.begin() + static_cast<std::ptrdiff_t>(i),
                          all.begin() + static_cast<std::ptrdiff_t>(end));
    SB_RETURN_IF_ERROR(Plan(part, max_payload, out));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> EncodeChunks(const Message& message, int64_t max_payload) {
  std::vector<std::string> out;
  SB_RETURN_IF_ERROR(Plan(message, max_payload, &out));
  return out;
}

}  // namespace switchboard::pubsub
