#include "switchboard/kube/watch.h"

#include "switchboard/kube/field_mask.h"
#include "switchboard/kube/request.h"

namespace switchboard::kube {

std::string_view WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

Result<WatchEvent> ParseWatchEvent(std::string_view line, const FieldMask* keep) {
  json j = keep != nullptr ? ParseMasked(line, *keep, "object")
                           : json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return Status::Internal("watch: malformed event line: " + std::string(line.substr(0, 200)));
  }
  WatchEvent ev;
  const std::string& type = j["type"].get_ref<const std::string&>();
  if (type == "ADDED") {
    ev.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    ev.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    ev.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    ev.type = WatchEventType::kBookmark;
  } else if (type == "ERROR") {
    ev.type = WatchEventType::kError;
  } else {
    return Status::Internal("watch: unknown event type \"" + type + "\"");
  }
  if (ev.type == WatchEventType::kError && keep != nullptr) {
    // An ERROR's object is a Status, not the watched kind: the mask would
    // drop its code, and a 410 (resourceVersion too old, the relist signal)
    // would read as a plain failure, retried from the same version forever.
    return ParseWatchEvent(line, nullptr);
  }
  if (auto it = j.find("object"); it != j.end()) ev.object = std::move(*it);
  if (ev.type == WatchEventType::kError) {
    ev.error = StatusFromStatusObject(ev.object, 500);
    if (ev.error.ok()) ev.error = Status::Internal("watch: ERROR event without a failure");
  }
  return ev;
}

bool WatchLineDecoder::Feed(std::string_view chunk,
                            const std::function<bool(std::string_view)>& on_line) {
  buf_.append(chunk);
  size_t start = 0;
  bool keep_going = true;
  while (keep_going) {
    size_t nl = buf_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(buf_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = nl + 1;
    if (!line.empty()) keep_going = on_line(line);
  }
  buf_.erase(0, start);
  return keep_going;
}

}  // namespace switchboard::kube
