// YAML documents -> nlohmann::json through libyaml's event parser. The node
// tree is built directly from events (no intermediate YAML node graph), which
// keeps `switchboard validate` fast on large manifest sets.
#include <yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include "loaders.h"

namespace switchboard::api::internal {
namespace {

struct ParserDeleter {
  void operator()(yaml_parser_t* p) const {
    yaml_parser_delete(p);
    delete p;
  }
};
struct EventGuard {
  yaml_event_t event;
  bool live = false;
  ~EventGuard() {
    if (live) yaml_event_delete(&event);
  }
};

bool Eq(std::string_view a, std::initializer_list<std::string_view> options) {
  for (auto o : options) {
    if (a == o) return true;
  }
  return false;
}

bool AllDigits(std::string_view s, bool hex = false) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    if (!ok) return false;
  }
  return true;
}

// Plain-scalar resolution as sigs.k8s.io/yaml (go-yaml v2) does it, which is
// what kubectl sends: null, YAML 1.1 booleans, integers (decimal, 0x, 0o),
// floats, .inf/.nan; anything else is a string.
nlohmann::json ResolvePlain(std::string_view s) {
  // Only these characters can start a plain scalar that is not a string
  // (null, booleans, numbers, .inf/.nan); most values are names.
  if (!s.empty() &&
      std::string_view("~nNtTfFyYoO0123456789+-.").find(s[0]) == std::string_view::npos) {
    return std::string(s);
  }
  if (Eq(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (Eq(s, {"true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})) {
    return true;
  }
  if (Eq(s, {"false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF"})) {
    return false;
  }
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  int base = 10;
  std::string_view digits = body;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o')) {
    base = body[1] == 'x' ? 16 : 8;
    digits = body.substr(2);
  }
  if (AllDigits(digits, base == 16)) {
    std::string d(digits);
    errno = 0;
    unsigned long long u = std::strtoull(d.c_str(), nullptr, base);
    if (errno == 0) {
      if (!negative) {
        if (u <= static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
          return static_cast<int64_t>(u);
        }
        return static_cast<uint64_t>(u);
      }
      if (u <= static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
        return -static_cast<int64_t>(u);
      }
    }
    if (base == 10) return std::strtod(std::string(s).c_str(), nullptr);  // beyond int64
    return std::string(s);
  }
  if (Eq(body, {".inf", ".Inf", ".INF"})) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (Eq(s, {".nan", ".NaN", ".NAN"})) return std::numeric_limits<double>::quiet_NaN();
  // [0-9]*(\.[0-9]*)?([eE][-+]?[0-9]+)? with at least one digit
  size_t i = 0;
  bool mantissa_digit = false;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, mantissa_digit = true;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, mantissa_digit = true;
  }
  if (mantissa_digit && i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    size_t j = i + 1;
    if (j < body.size() && (body[j] == '+' || body[j] == '-')) ++j;
    if (AllDigits(body.substr(j))) i = body.size();
  }
  if (mantissa_digit && i == body.size()) return std::strtod(std::string(s).c_str(), nullptr);
  return std::string(s);
}

struct Anchor {
  nlohmann::json value;
  size_t nodes;
};

struct Frame {
  nlohmann::json value;
  bool is_map = false;
  bool have_key = false;
  std::string key;
  int key_line = 0;
  bool key_is_merge = false;
  std::string anchor;
  size_t nodes = 1;
  bool record_items = false;
  std::vector<nlohmann::json> merges;
  std::vector<std::string> dropped;  // keys whose values were dropped
};

// A container inside a dropped value: only its keys' hashes are kept, to
// notice a key given twice without building the value.
struct Skipped {
  bool is_map = false;
  bool expect_key = true;
  std::vector<uint64_t> keys;
};

class Builder {
 public:
  // The first `skip` documents are parsed but not emitted: a retry has
  // emitted them already.
  Builder(const LoadOptions& options, const Emit& emit, size_t skip)
      : options_(options), emit_(emit), skip_(skip) {}

  size_t emitted() const { return emitted_; }

  // Set when a dropped value holds something that cannot be judged without
  // building it (an anchor that may be aliased later, a key given twice or
  // whose hash collides, a complex key): LoadYaml then parses the text again
  // keeping everything, which gives the exact answer.
  bool retry_without_dropping = false;

  void StartDocument() {
    stack_.clear();
    skipped_.clear();
    dropping_ = false;
    anchors_.clear();
    root_ = nullptr;
    root_line_ = 0;
    item_lines_.clear();
  }

  Status EndDocument() {
    if (!root_.is_null()) {
      if (skip_ > 0) {
        --skip_;
      } else {
        emit_({std::move(root_), root_line_, std::move(item_lines_)});
        ++emitted_;
      }
    }
    root_ = nullptr;
    item_lines_ = {};
    return Status::Ok();
  }

  Status Scalar(const yaml_event_t& e) {
    std::string_view text(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
    if (InDropped()) {
      if (e.data.scalar.anchor) return Retry();
      return DroppedLeaf(&text);
    }
    bool plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    std::string_view tag =
        e.data.scalar.tag ? reinterpret_cast<const char*>(e.data.scalar.tag) : "";
    // A mapping key is used as raw text: resolving it would be wasted work
    // (unless it is anchored, and so may be used as a value elsewhere).
    bool is_key = !stack_.empty() && stack_.back().is_map && !stack_.back().have_key &&
                  e.data.scalar.anchor == nullptr;
    nlohmann::json v;
    if (is_key) {
      // Add() reads the key from `text`.
    } else if (!plain || tag == YAML_STR_TAG) {
      v = std::string(text);
    } else {
      v = ResolvePlain(text);
      // JSON has no NaN or infinity, so the API server (and kubectl, whose
      // YAML-to-JSON step fails on them) can never hold one: refuse it here
      // rather than validate a value no cluster could store.
      if (v.is_number_float() && !std::isfinite(v.get<double>())) {
        return Status::InvalidArgument(
            "\"" + std::string(text) +
            "\" is not a finite number, and JSON (so the Kubernetes API) cannot carry it; "
            "write a number in range, or quote it to mean a string");
      }
    }
    int line = static_cast<int>(e.start_mark.line) + 1;
    if (e.data.scalar.anchor) {
      anchors_[reinterpret_cast<const char*>(e.data.scalar.anchor)] = {v, 1};
    }
    return Add(std::move(v), 1, line, &text, plain);
  }

  Status Start(const yaml_event_t& e, bool is_map) {
    if (static_cast<int>(stack_.size() + skipped_.size()) >= options_.max_depth) {
      return Status::InvalidArgument("nesting deeper than " + std::to_string(options_.max_depth) +
                                     " levels");
    }
    if (InDropped()) {
      const yaml_char_t* a = is_map ? e.data.mapping_start.anchor : e.data.sequence_start.anchor;
      if (a != nullptr) return Retry();
      if (!skipped_.empty() && skipped_.back().is_map && skipped_.back().expect_key) {
        return Retry();  // a container as a key: the full parse names the error
      }
      dropping_ = false;
      skipped_.push_back({is_map, true, {}});
      return Status::Ok();
    }
    Frame f;
    f.is_map = is_map;
    f.value = is_map ? nlohmann::json::object() : nlohmann::json::array();
    const yaml_char_t* anchor = is_map ? e.data.mapping_start.anchor : e.data.sequence_start.anchor;
    if (anchor) f.anchor = reinterpret_cast<const char*>(anchor);
    int line = static_cast<int>(e.start_mark.line) + 1;
    // Record the line of each element of the root mapping's `items` sequence
    // so the elements of a List get their own line numbers.
    if (!is_map && stack_.size() == 1 && stack_[0].is_map && stack_[0].have_key &&
        stack_[0].key == "items") {
      f.record_items = true;
    }
    if (stack_.empty()) root_line_ = line;
    if (!stack_.empty() && stack_.back().record_items) item_lines_.push_back(line);
    if (!stack_.empty() && stack_.back().is_map && !stack_.back().have_key) {
      return Status::InvalidArgument("a mapping or sequence used as a key is not supported");
    }
    stack_.push_back(std::move(f));
    return Status::Ok();
  }

  Status End() {
    if (!skipped_.empty()) {
      Skipped done = std::move(skipped_.back());
      skipped_.pop_back();
      if (done.is_map && done.keys.size() > 1) {
        std::sort(done.keys.begin(), done.keys.end());
        if (std::adjacent_find(done.keys.begin(), done.keys.end()) != done.keys.end()) {
          return Retry();
        }
      }
      if (!skipped_.empty() && skipped_.back().is_map) skipped_.back().expect_key = true;
      return Status::Ok();
    }
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.is_map) {
      // YAML merge keys: explicit keys win over merged ones.
      for (auto& m : f.merges) {
        for (auto it = m.begin(); it != m.end(); ++it) {
          if (!f.value.contains(it.key())) f.value[it.key()] = it.value();
        }
      }
    }
    if (!f.anchor.empty()) anchors_[f.anchor] = {f.value, f.nodes};
    return Add(std::move(f.value), f.nodes, 0, nullptr, false);
  }

  Status Alias(const yaml_event_t& e) {
    std::string name = reinterpret_cast<const char*>(e.data.alias.anchor);
    if (InDropped()) {
      if (anchors_.find(name) == anchors_.end()) return Retry();
      return DroppedLeaf(nullptr);
    }
    auto it = anchors_.find(name);
    if (it == anchors_.end()) return Status::InvalidArgument("unknown alias *" + name);
    alias_nodes_ += it->second.nodes;
    if (alias_nodes_ > options_.max_alias_nodes) {
      return Status::ResourceExhausted("aliases expand to more than " +
                                       std::to_string(options_.max_alias_nodes) +
                                       " nodes; refusing (billion laughs?)");
    }
    int line = static_cast<int>(e.start_mark.line) + 1;
    return Add(it->second.value, it->second.nodes, line, nullptr, false);
  }

 private:
  bool InDropped() const { return dropping_ || !skipped_.empty(); }

  Status Retry() {
    retry_without_dropping = true;
    return Status::Internal("retry without dropping metadata fields");
  }

  // A scalar (raw text) or an alias (nullptr) inside a dropped value.
  Status DroppedLeaf(const std::string_view* raw) {
    if (skipped_.empty()) {  // the dropped value itself was this leaf
      dropping_ = false;
      return Status::Ok();
    }
    Skipped& s = skipped_.back();
    if (!s.is_map) return Status::Ok();
    if (s.expect_key) {
      if (raw == nullptr) return Retry();
      s.keys.push_back(std::hash<std::string_view>()(*raw));
    }
    s.expect_key = !s.expect_key;
    return Status::Ok();
  }

  // Whether the value of `key`, just read in the mapping on top of the
  // stack, is one of options_.drop_metadata_fields: the mapping is the
  // document's metadata (or a List item's).
  bool DropsValueOf(const std::string& key) const {
    if (options_.drop_metadata_fields.empty()) return false;
    bool metadata = (stack_.size() == 2 && stack_[0].is_map && stack_[0].key == "metadata") ||
                    (stack_.size() == 4 && stack_[0].is_map && stack_[0].key == "items" &&
                     !stack_[1].is_map && stack_[2].is_map && stack_[2].key == "metadata");
    if (!metadata || !stack_.back().is_map) return false;
    const auto& f = options_.drop_metadata_fields;
    return std::find(f.begin(), f.end(), key) != f.end();
  }

  static bool Dropped(const Frame& f, const std::string& key) {
    return std::find(f.dropped.begin(), f.dropped.end(), key) != f.dropped.end();
  }

  // `line` is 0 for a finished container (its line was recorded at its start).
  Status Add(nlohmann::json v, size_t nodes, int line, const std::string_view* raw, bool plain) {
    if (stack_.empty()) {
      if (line > 0) root_line_ = line;
      root_ = std::move(v);
      return Status::Ok();
    }
    Frame& top = stack_.back();
    top.nodes += nodes;
    if (!top.is_map) {
      if (top.record_items && line > 0) item_lines_.push_back(line);
      top.value.push_back(std::move(v));
      return Status::Ok();
    }
    if (!top.have_key) {
      if (raw == nullptr) {
        return Status::InvalidArgument("a mapping or sequence used as a key is not supported");
      }
      top.have_key = true;
      top.key = std::string(*raw);
      top.key_line = line;
      top.key_is_merge = plain && *raw == "<<";
      if (!top.key_is_merge && DropsValueOf(top.key)) {
        if (top.value.contains(top.key) || Dropped(top, top.key)) {
          error_line_ = line;
          return Status::InvalidArgument("mapping key \"" + top.key + "\" already defined");
        }
        top.dropped.push_back(std::move(top.key));
        top.have_key = false;
        dropping_ = true;  // the next node is the value: read it, keep nothing
      }
      return Status::Ok();
    }
    top.have_key = false;
    if (top.key_is_merge) {
      if (v.is_object()) {
        top.merges.push_back(std::move(v));
      } else if (v.is_array()) {
        for (auto& m : v) {
          if (!m.is_object()) return Status::InvalidArgument("merge key << needs mappings");
          top.merges.push_back(std::move(m));
        }
      } else {
        return Status::InvalidArgument("merge key << needs a mapping");
      }
      return Status::Ok();
    }
    if (!top.dropped.empty() && Dropped(top, top.key)) {
      error_line_ = top.key_line;
      return Status::InvalidArgument("mapping key \"" + top.key + "\" already defined");
    }
    // One lookup: emplace does not replace an existing key.
    auto [it, inserted] =
        top.value.get_ref<nlohmann::json::object_t&>().emplace(std::move(top.key), std::move(v));
    if (!inserted) {
      error_line_ = top.key_line;
      return Status::InvalidArgument("mapping key \"" + it->first + "\" already defined");
    }
    return Status::Ok();
  }

 public:
  int error_line_ = 0;

 private:
  const LoadOptions& options_;
  const Emit& emit_;
  size_t skip_;
  size_t emitted_ = 0;
  std::vector<Frame> stack_;
  std::vector<Skipped> skipped_;  // open containers inside a dropped value
  bool dropping_ = false;         // the next node is a dropped value
  std::unordered_map<std::string, Anchor> anchors_;
  nlohmann::json root_;
  int root_line_ = 0;
  std::vector<int> item_lines_;
  size_t alias_nodes_ = 0;
};

}  // namespace

namespace {

RawResult LoadYamlFrom(std::string_view text, const LoadOptions& options, const Emit& emit,
                       size_t skip) {
  RawResult out;
  std::unique_ptr<yaml_parser_t, ParserDeleter> parser(new yaml_parser_t);
  if (!yaml_parser_initialize(parser.get())) {
    out.status = Status::Internal("yaml parser initialization failed");
    return out;
  }
  yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  Builder builder(options, emit, skip);
  while (true) {
    EventGuard g;
    if (!yaml_parser_parse(parser.get(), &g.event)) {
      const yaml_parser_t& p = *parser;
      std::string msg = p.problem ? p.problem : "syntax error";
      if (p.context) msg = std::string(p.context) + ": " + msg;
      out.error_line = static_cast<int>(p.problem_mark.line) + 1;
      out.status = Status::InvalidArgument("YAML: " + msg);
      return out;
    }
    g.live = true;
    Status s;
    const yaml_event_t& e = g.event;
    switch (e.type) {
      case YAML_DOCUMENT_START_EVENT:
        builder.StartDocument();
        break;
      case YAML_DOCUMENT_END_EVENT:
        s = builder.EndDocument();
        break;
      case YAML_SCALAR_EVENT:
        s = builder.Scalar(e);
        break;
      case YAML_SEQUENCE_START_EVENT:
        s = builder.Start(e, false);
        break;
      case YAML_MAPPING_START_EVENT:
        s = builder.Start(e, true);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        s = builder.End();
        break;
      case YAML_ALIAS_EVENT:
        s = builder.Alias(e);
        break;
      case YAML_STREAM_END_EVENT:
        return out;
      default:
        break;
    }
    if (!s.ok() && builder.retry_without_dropping) {
      LoadOptions keep_all = options;
      keep_all.drop_metadata_fields.clear();
      // The documents before this one are emitted already (the retry only
      // changes what this one keeps).
      return LoadYamlFrom(text, keep_all, emit, skip + builder.emitted());
    }
    if (!s.ok()) {
      out.error_line =
          builder.error_line_ ? builder.error_line_ : static_cast<int>(e.start_mark.line) + 1;
      out.status = Status(s.code(), "YAML: " + s.message());
      return out;
    }
  }
}

}  // namespace

RawResult LoadYaml(std::string_view text, const LoadOptions& options, const Emit& emit) {
  return LoadYamlFrom(text, options, emit, 0);
}

}  // namespace switchboard::api::internal
