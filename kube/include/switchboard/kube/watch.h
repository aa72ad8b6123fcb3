// Watch events as the API server streams them (one JSON object per line),
// and the line decoder that turns arbitrary chunks into events. Pure.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/kube/options.h"
#include "switchboard/kube/resource.h"

namespace switchboard::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

std::string_view WatchEventTypeName(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  json object;   // the object (for kBookmark only metadata.resourceVersion matters)
  Status error;  // kError: the server's Status (410 Gone -> kGone); OK otherwise
};

// Parses one line of a watch stream: {"type":"ADDED","object":{...}}.
// With `keep`, the object is parsed keeping only those members.
Result<WatchEvent> ParseWatchEvent(std::string_view line, const FieldMask* keep = nullptr);

// Splits a byte stream into lines across chunk boundaries.
class WatchLineDecoder {
 public:
  // Calls `on_line` for each complete, non-empty line in the data so far;
  // stops early (and returns false) when on_line returns false.
  bool Feed(std::string_view chunk, const std::function<bool(std::string_view)>& on_line);
  size_t buffered() const { return buf_.size(); }

 private:
  std::string buf_;
};

}  // namespace switchboard::kube
