// Topics and subjects. A topic name is always one subject token; the subject
// is `<prefix>.<name>`. Anything that could escape an installation's subject
// namespace (dots in a name, wildcards, whitespace, empty tokens) is refused.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::pubsub {

inline constexpr const char* kDefaultSubjectPrefix = "hatchet.pubsub";

enum class TopicKind { kTenantStream, kSchedulerPartition };

// "tenant-stream" / "scheduler-partition": the metrics' topic_kind label.
std::string_view TopicKindLabel(TopicKind kind);

struct Topic {
  TopicKind kind = TopicKind::kTenantStream;
  std::string name;  // one subject token, e.g. "<uuid>_v1"

  // `<tenant-uuid>_v1`; the uuid is validated and lowercased.
  static Result<Topic> TenantStream(std::string_view tenant_id);
  // `<partition-id>_scheduler_v1`.
  static Result<Topic> SchedulerPartition(std::string_view partition_id);
  // A raw topic name; its kind is inferred from the `_scheduler_v1` suffix.
  static Result<Topic> FromName(std::string_view name);
};

// Checks a prefix: non-empty dot-separated tokens, no whitespace, `*`, `>`,
// leading/trailing dot. The error names `subject prefix` and the fix.
Status ValidateSubjectPrefix(std::string_view prefix);
// Checks a topic name: one non-empty token without `.`, `*`, `>`, whitespace.
Status ValidateTopicName(std::string_view name);

// `<prefix>.<topic name>`; both validated.
Result<std::string> Subject(std::string_view prefix, const Topic& topic);

}  // namespace switchboard::pubsub
