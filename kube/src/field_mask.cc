#include "switchboard/kube/field_mask.h"

namespace switchboard::kube {
namespace {

using Node = FieldMask::Node;

const Node* All() {
  static const Node all{{}, true, false};
  return &all;
}

// The node of member `key` of a container whose node is `parent`; null:
// dropped.
const Node* Child(const Node* parent, std::string_view key) {
  if (parent == nullptr) return nullptr;
  if (parent->all) return All();
  auto it = parent->children.find(key);
  if (it != parent->children.end()) return &it->second;
  return parent->others ? All() : nullptr;
}

}  // namespace

FieldMask FieldMask::Keep(const std::vector<std::vector<std::string>>& paths) {
  auto root = std::make_shared<Node>();
  for (const auto& path : paths) {
    Node* n = root.get();
    for (const std::string& member : path) {
      if (n->all) break;
      n = &n->children[member];
    }
    n->all = true;
    n->children.clear();
  }
  FieldMask m;
  m.root_ = std::move(root);
  return m;
}

json ParseMasked(std::string_view text, const FieldMask& mask, std::string_view under) {
  if (mask.keeps_everything()) return json::parse(text, nullptr, /*allow_exceptions=*/false);
  // The node of the root: the mask itself, or one that keeps every member
  // but `under`, which gets the mask.
  Node wrapper;
  const Node* root = mask.root();
  if (!under.empty()) {
    wrapper.others = true;
    wrapper.children.emplace(std::string(under), *mask.root());
    root = &wrapper;
  }
  // The parser reports each event with the depth of the container it is
  // in (ref_stack.size()); the end of a dropped container is not reported,
  // so the stacks are cut back to each event's depth first.
  struct Level {
    const Node* node;
    bool array;
  };
  std::vector<Level> stack;
  const Node* next = root;  // the node of the value after the last key
  auto cb = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    const auto d = static_cast<size_t>(depth);
    switch (event) {
      case json::parse_event_t::key: {
        stack.resize(d);
        next = d == 0 ? nullptr : Child(stack[d - 1].node, parsed.get_ref<const std::string&>());
        return next != nullptr;
      }
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        stack.resize(d);
        const Node* node = d == 0 ? root : (stack[d - 1].array ? stack[d - 1].node : next);
        stack.push_back({node, event == json::parse_event_t::array_start});
        return node != nullptr;
      }
      case json::parse_event_t::value: {
        if (d == 0) return true;
        if (stack.size() < d) return false;
        return (stack[d - 1].array ? stack[d - 1].node : next) != nullptr;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack.resize(std::min(stack.size(), d));
        return true;
    }
    return true;
  };
  return json::parse(text, cb, /*allow_exceptions=*/false);
}

}  // namespace switchboard::kube
