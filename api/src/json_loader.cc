// JSON documents (one or more concatenated values) -> nlohmann::json. A small
// scanner finds where each value starts and ends, its line, the line of each
// element of a top-level "items" array (List kinds), and duplicate keys
// (which nlohmann would silently collapse, last wins); nlohmann parses the
// value itself.
#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

#include "loaders.h"
#include "switchboard/api/json_depth.h"

namespace switchboard::api::internal {
namespace {

struct Span {
  size_t begin = 0;
  size_t end = 0;
  int line = 1;
  std::vector<int> item_lines;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A key as JSON means it: escapes decoded (rare, so only then).
std::string DecodeKey(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  try {
    return nlohmann::json::parse("\"" + std::string(raw) + "\"").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::string(raw);  // nlohmann reports the bad escape later
  }
}

uint64_t HashKey(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::hash<std::string_view>()(raw);
  return std::hash<std::string>()(DecodeKey(raw));
}

// A JSON scan's position relative to strings: Step() eats one character of
// a string (escapes included) and keeps the last complete string's contents.
struct StringTracker {
  bool in = false;
  bool escaped = false;
  size_t start = 0;
  std::string_view last;

  void Open(size_t pos) {
    in = true;
    start = pos + 1;
  }
  // Only while `in`.
  void Step(std::string_view text, size_t pos) {
    const char c = text[pos];
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in = false;
      last = text.substr(start, pos - start);
    }
  }
};

// Walks the object whose '{' is at text[open] (at line `line`) and finds a
// key given twice among its own keys. Called only when the key hashes of
// that object collide, so it may allocate freely.
bool FindDuplicateKey(std::string_view text, size_t open, int line, std::string* key, int* key_line,
                      int* first_line) {
  std::unordered_map<std::string, int> seen;
  int depth = 0;
  StringTracker str;
  int last_line = line;
  for (size_t pos = open; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '\n') ++line;
    if (str.in) {
      str.Step(text, pos);
      continue;
    }
    if (c == '"') {
      str.Open(pos);
      last_line = line;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return false;
    } else if (c == ':' && depth == 1) {
      std::string k = DecodeKey(str.last);
      auto [it, inserted] = seen.emplace(k, last_line);
      if (!inserted) {
        *key = std::move(k);
        *key_line = last_line;
        *first_line = it->second;
        return true;
      }
    }
  }
  return false;
}

struct ScanError {
  Status status;
  int line = 0;
  bool not_json = false;  // bare words, single quotes, comments: YAML flow style
};

// Scans the container starting at text[pos] ('{' or '['). On success sets
// span->end past its closing bracket and advances *line. `too_deep` is where
// the text first nests deeper than `max_depth` (FindNestingBeyond): the scan
// stops there with that error.
ScanError ScanValue(std::string_view text, size_t pos, int* line, int max_depth, size_t too_deep,
                    Span* span) {
  struct Level {
    bool object = false;
    size_t open = 0;  // offset of its bracket
    int line = 0;     // line of its bracket
    std::vector<uint64_t> keys;
  };
  // One entry per open container, reused between values of the same depth
  // so that small objects cost no allocation.
  thread_local std::vector<Level> levels;
  int depth = 0;
  StringTracker str;
  bool key_is_items = false, in_items = false, expect_item = false;
  bool root_is_object = text[pos] == '{';
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '\n') ++*line;
    if (str.in) {
      str.Step(text, pos);
      continue;
    }
    if (expect_item && !IsSpace(c)) {
      if (c != ']') span->item_lines.push_back(*line);
      expect_item = false;
    }
    switch (c) {
      case '"':
        str.Open(pos);
        break;
      case '{':
      case '[':
        if (pos == too_deep) {
          return {Status::InvalidArgument("JSON: nesting deeper than " + std::to_string(max_depth) +
                                          " levels"),
                  *line};
        }
        ++depth;
        if (static_cast<int>(levels.size()) < depth) levels.resize(depth);
        {
          Level& l = levels[depth - 1];
          l.object = c == '{';
          l.open = pos;
          l.line = *line;
          l.keys.clear();
        }
        if (depth == 2 && c == '[' && root_is_object && key_is_items) {
          in_items = true;
          expect_item = true;
        }
        break;
      case '}':
      case ']': {
        if (depth <= 0) return {Status::InvalidArgument("JSON: unbalanced brackets"), *line};
        Level& l = levels[depth - 1];
        if (l.object && l.keys.size() > 1) {
          std::sort(l.keys.begin(), l.keys.end());
          if (std::adjacent_find(l.keys.begin(), l.keys.end()) != l.keys.end()) {
            std::string key;
            int key_line = 0, first_line = 0;
            if (FindDuplicateKey(text, l.open, l.line, &key, &key_line, &first_line)) {
              return {Status::InvalidArgument("JSON: duplicate key \"" + key +
                                              "\" (first at line " + std::to_string(first_line) +
                                              "); an object may give each key once: keep one"),
                      key_line};
            }
          }
        }
        if (l.keys.capacity() > 4096) l.keys = {};  // give a huge object's memory back
        --depth;
        if (depth == 1) in_items = false;
        if (depth == 0) {
          span->end = pos + 1;
          return {};
        }
        break;
      }
      case ':':
        if (depth == 1) key_is_items = str.last == "items";
        if (depth >= 1 && levels[depth - 1].object) {
          levels[depth - 1].keys.push_back(HashKey(str.last));
        }
        break;
      case ',':
        if (depth == 1) key_is_items = false;
        if (depth == 2 && in_items) expect_item = true;
        break;
      case '\'':
      case '#':
        return {Status::InvalidArgument("not JSON"), *line, true};
      default:
        // Outside strings JSON has only true, false and null as words (and
        // exponents, right after a digit).
        if (IsAlpha(c) && !(pos > 0 && ((text[pos - 1] >= '0' && text[pos - 1] <= '9') ||
                                        text[pos - 1] == '.' || IsAlpha(text[pos - 1])))) {
          size_t end = pos;
          while (end < text.size() && IsAlpha(text[end])) ++end;
          std::string_view word = text.substr(pos, end - pos);
          if (word != "true" && word != "false" && word != "null") {
            // An unquoted key ({name: x}) is YAML; a misspelt value
            // ({"a": tru}) stays a JSON error.
            while (end < text.size() && !IsSpace(text[end]) &&
                   std::string_view(",:{}[]\"").find(text[end]) == std::string_view::npos) {
              ++end;
            }
            while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
            if (end < text.size() && text[end] == ':') {
              return {Status::InvalidArgument("not JSON"), *line, true};
            }
          }
        }
        break;
    }
  }
  return {Status::InvalidArgument("JSON: unexpected end of input (unclosed '{' or '[')"), *line};
}

// The newlines in `body` before the first place `number` stands as a whole
// token (not inside a longer number or a name); 0 when it is not found.
int LinesBefore(std::string_view body, std::string_view number) {
  auto part_of_token = [](char c) {
    return (c >= '0' && c <= '9') || IsAlpha(c) || c == '.' || c == '-' || c == '+' || c == '"';
  };
  for (size_t at = number.empty() ? std::string_view::npos : body.find(number);
       at != std::string_view::npos; at = body.find(number, at + 1)) {
    size_t end = at + number.size();
    if ((at > 0 && part_of_token(body[at - 1])) ||
        (end < body.size() && part_of_token(body[end]))) {
      continue;
    }
    return static_cast<int>(std::count(body.begin(), body.begin() + at, '\n'));
  }
  return 0;
}

// Parses one value, leaving out the values of dropped metadata keys (of the
// root object, or of each element of its "items").
nlohmann::json Parse(std::string_view body, const LoadOptions& options) {
  if (options.drop_metadata_fields.empty()) return nlohmann::json::parse(body);
  // Only the keys at depth 1 (root) and 3 (a List item) matter: they say
  // whether a key at depth 2 or 4 is one of a document's metadata fields.
  std::string root_key, item_key;
  auto dropped = [&](const std::string& key) {
    const auto& f = options.drop_metadata_fields;
    return std::find(f.begin(), f.end(), key) != f.end();
  };
  return nlohmann::json::parse(
      body, [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event != nlohmann::json::parse_event_t::key || depth > 4) return true;
        const auto& key = parsed.get_ref<const std::string&>();
        switch (depth) {
          case 1:
            root_key = key;
            return true;
          case 2:
            return !(root_key == "metadata" && dropped(key));
          case 3:
            item_key = key;
            return true;
          default:
            return !(root_key == "items" && item_key == "metadata" && dropped(key));
        }
      });
}

}  // namespace

RawResult LoadJson(std::string_view text, const LoadOptions& options, const Emit& emit) {
  // Every value is scanned before any is parsed: a text that turns out to be
  // YAML flow style further on must emit nothing.
  RawResult out;
  size_t too_deep = FindNestingBeyond(text, options.max_depth);
  std::vector<Span> spans;
  ScanError scan_error;
  size_t pos = 0;
  int line = 1;
  while (true) {
    while (pos < text.size() && IsSpace(text[pos])) {
      if (text[pos] == '\n') ++line;
      ++pos;
    }
    if (pos >= text.size()) break;
    if (text[pos] != '{' && text[pos] != '[') {
      scan_error = {
          Status::InvalidArgument("JSON: expected '{' or '[' to start the next document, found '" +
                                  std::string(1, text[pos]) + "'"),
          line};
      break;
    }
    Span span;
    span.begin = pos;
    span.line = line;
    scan_error = ScanValue(text, pos, &line, options.max_depth, too_deep, &span);
    if (scan_error.not_json) {
      out.not_json = true;
      return out;
    }
    if (!scan_error.status.ok()) break;
    pos = span.end;
    spans.push_back(std::move(span));
  }
  for (auto& span : spans) {
    std::string_view body = text.substr(span.begin, span.end - span.begin);
    nlohmann::json value;
    try {
      value = Parse(body, options);
    } catch (const nlohmann::json::parse_error& e) {
      // e.byte is 1-based within `body`; count the lines up to it.
      size_t upto = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, body.size());
      int err_line = span.line;
      for (size_t i = 0; i < upto; ++i) err_line += body[i] == '\n';
      std::string msg = e.what();
      // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> keep the tail.
      if (auto p = msg.find(": "); p != std::string::npos) msg = msg.substr(p + 2);
      out.status = Status::InvalidArgument("JSON: " + msg);
      out.error_line = err_line;
      return out;
    } catch (const nlohmann::json::out_of_range& e) {
      // nlohmann's only out_of_range from parsing: a number beyond double
      // ("number overflow parsing '1e400'"), with no position given.
      std::string msg = e.what();
      std::string number;
      if (auto open = msg.find('\''), close = msg.rfind('\'');
          open != std::string::npos && close > open) {
        number = msg.substr(open + 1, close - open - 1);
      }
      out.status = Status::InvalidArgument(
          "JSON: \"" + number +
          "\" is not a finite number, and the Kubernetes API cannot carry it; write a number in "
          "range, or quote it to mean a string");
      out.error_line = span.line + LinesBefore(body, number);
      return out;
    }
    if (!value.is_null()) emit({std::move(value), span.line, std::move(span.item_lines)});
  }
  out.status = scan_error.status;
  out.error_line = scan_error.status.ok() ? 0 : scan_error.line;
  return out;
}

}  // namespace switchboard::api::internal
