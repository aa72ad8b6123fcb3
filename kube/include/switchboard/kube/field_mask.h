// Which members of an object to parse at all: a watcher given one
// (WatcherOptions::parse_keep) drops every other member while it parses a
// list page or a watch event, so the API's whole object (managedFields, a
// status, data nobody reads) is never built in memory. Only the parse
// changes: the transform still runs on what is kept, so a mask must keep
// at least what the transform keeps (and whatever it reads to decide).
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/kube/resource.h"

namespace switchboard::kube {

class FieldMask {
 public:
  // Keeps everything (no mask).
  FieldMask() = default;
  // Keeps exactly `paths`, each a list of member names from the object's
  // root ({"metadata", "name"}); a kept path keeps its whole value. An
  // array on a path is transparent: the rest of the path applies to each
  // element ({"metadata", "ownerReferences", "uid"}).
  static FieldMask Keep(const std::vector<std::vector<std::string>>& paths);

  bool keeps_everything() const { return root_ == nullptr; }

  struct Node {
    std::map<std::string, Node, std::less<>> children;
    bool all = false;     // keep this value whole
    bool others = false;  // members not in `children` are kept whole
  };
  const Node* root() const { return root_.get(); }

 private:
  std::shared_ptr<const Node> root_;  // null: everything
};

// `text` parsed as JSON, with `mask` applied to the value at member
// `under` of the root object (each element when it is an array: a list's
// "items"), or to the root when `under` is empty; everything else is kept.
// A discarded value (is_discarded()) when `text` is not JSON.
json ParseMasked(std::string_view text, const FieldMask& mask, std::string_view under = {});

}  // namespace switchboard::kube
