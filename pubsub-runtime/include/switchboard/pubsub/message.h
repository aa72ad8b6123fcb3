// Hatchet's pub/sub message (Go: msgqueue.Message), as it travels over NATS.
//
// Field-for-field the Go struct; std::optional marks the fields Go can leave
// nil (encoded as JSON null), so a decode followed by an encode reproduces
// what the Go engine wrote.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::pubsub {

// Go's uuid.Nil as text: what tenant_id holds when unset.
inline constexpr const char* kNilTenantId = "00000000-0000-0000-0000-000000000000";

// An instant as Go's time.Time holds it: seconds since the Unix epoch (UTC),
// nanoseconds, and the UTC offset the sender wrote (so a decoded time
// re-encodes as the same text). Default-constructed it is Go's zero time,
// 0001-01-01T00:00:00Z, for which published_at is omitted.
struct Timestamp {
  static constexpr int64_t kZeroUnixSeconds = -62135596800;

  int64_t unix_seconds = kZeroUnixSeconds;
  int32_t nanos = 0;               // [0, 1e9)
  int32_t utc_offset_seconds = 0;  // as written; 0 encodes as "Z"

  bool IsZero() const { return unix_seconds == kZeroUnixSeconds && nanos == 0; }
  static Timestamp FromSystemClock(std::chrono::system_clock::time_point t);
  static Timestamp Now() { return FromSystemClock(std::chrono::system_clock::now()); }
  std::chrono::system_clock::time_point ToSystemClock() const;
  bool operator==(const Timestamp&) const = default;
};

struct Message {
  std::string id;                                    // "id", e.g. "task-completed"
  std::optional<std::vector<std::string>> payloads;  // "messages": raw bytes, base64 on the wire
  std::string tenant_id = kNilTenantId;              // "tenant_id": lowercase UUID
  bool immediately_expire = false;                   // "immediately_expire"
  bool persistent = false;                           // "persistent"
  std::optional<std::map<std::string, std::string>> otel_carrier;  // "otel_carrier"
  int64_t retries = 0;                                             // "retries"
  bool compressed = false;  // "compressed", omitted when false
  Timestamp published_at;   // "published_at", omitted when zero

  bool operator==(const Message&) const = default;

  // Payload count and total payload bytes (0 when payloads is null).
  size_t PayloadCount() const { return payloads ? payloads->size() : 0; }
  size_t PayloadBytes() const;
};

}  // namespace switchboard::pubsub
