#include "switchboard/pubsub/topic.h"

#include "uuid.h"

namespace switchboard::pubsub {
namespace {

constexpr std::string_view kSchedulerSuffix = "_scheduler_v1";

// Characters that would change what a subject matches or how it splits.
bool Forbidden(char c) {
  return c == '*' || c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

}  // namespace

std::string_view TopicKindLabel(TopicKind kind) {
  return kind == TopicKind::kSchedulerPartition ? "scheduler-partition" : "tenant-stream";
}

Status ValidateTopicName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("topic name: must not be empty");
  for (char c : name) {
    if (c == '.') {
      return Status::InvalidArgument("topic name \"" + std::string(name) +
                                     "\": must be one subject token; remove the '.'");
    }
    if (Forbidden(c)) {
      return Status::InvalidArgument(
          "topic name \"" + std::string(name) +
          "\": must not contain whitespace, control characters, '*' or '>'");
    }
  }
  return Status::Ok();
}

Status ValidateSubjectPrefix(std::string_view prefix) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("subject prefix \"" + std::string(prefix) +
                                   "\": " + std::string(why));
  };
  if (prefix.empty()) return bad("must not be empty (the engine's default is hatchet.pubsub)");
  if (prefix.front() == '.' || prefix.back() == '.') return bad("must not start or end with '.'");
  if (prefix.find("..") != std::string_view::npos)
    return bad("has an empty token ('..'); remove it");
  for (char c : prefix) {
    if (Forbidden(c)) {
      return bad(
          "must not contain whitespace, control characters, '*' or '>' (wildcards would "
          "reach other installations' subjects)");
    }
  }
  return Status::Ok();
}

Result<Topic> Topic::TenantStream(std::string_view tenant_id) {
  auto uuid = internal::NormalizeUuid(tenant_id);
  if (!uuid) {
    return Status::InvalidArgument("tenant id \"" + std::string(tenant_id.substr(0, 64)) +
                                   "\": not a UUID (want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
  }
  return Topic{TopicKind::kTenantStream, *uuid + "_v1"};
}

Result<Topic> Topic::SchedulerPartition(std::string_view partition_id) {
  if (partition_id.empty())
    return Status::InvalidArgument("scheduler partition id: must not be empty");
  std::string name = std::string(partition_id) + std::string(kSchedulerSuffix);
  SB_RETURN_IF_ERROR(ValidateTopicName(name).Annotate("scheduler partition id"));
  return Topic{TopicKind::kSchedulerPartition, std::move(name)};
}

Result<Topic> Topic::FromName(std::string_view name) {
  SB_RETURN_IF_ERROR(ValidateTopicName(name));
  TopicKind kind =
      name.ends_with(kSchedulerSuffix) ? TopicKind::kSchedulerPartition : TopicKind::kTenantStream;
  return Topic{kind, std::string(name)};
}

Result<std::string> Subject(std::string_view prefix, const Topic& topic) {
  SB_RETURN_IF_ERROR(ValidateSubjectPrefix(prefix));
  SB_RETURN_IF_ERROR(ValidateTopicName(topic.name));
  std::string s;
  s.reserve(prefix.size() + 1 + topic.name.size());
  s.append(prefix).push_back('.');
  s.append(topic.name);
  return s;
}

}  // namespace switchboard::pubsub
