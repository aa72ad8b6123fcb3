// JSON documents (one or more concatenated values) -> nlohmann::json. A small
// scanner finds where each value starts and ends, its line, and the line of
// each element of a top-level "items" array (List kinds); nlohmann parses the
// value itself.
#include <string>

#include "loaders.h"

namespace switchboard::api::internal {
namespace {

struct Span {
  size_t begin = 0;
  size_t end = 0;
  int line = 1;
  std::vector<int> item_lines;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Scans the container starting at text[pos] ('{' or '['). On success sets
// span->end past its closing bracket and advances *line.
Status ScanValue(std::string_view text, size_t pos, int* line, int max_depth, Span* span) {
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t string_start = 0;
  std::string_view last_string;
  bool key_is_items = false, in_items = false, expect_item = false;
  bool root_is_object = text[pos] == '{';
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '\n') ++*line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 1) last_string = text.substr(string_start, pos - string_start);
      }
      continue;
    }
    if (expect_item && !IsSpace(c)) {
      if (c != ']') span->item_lines.push_back(*line);
      expect_item = false;
    }
    switch (c) {
      case '"':
        in_string = true;
        string_start = pos + 1;
        break;
      case '{':
      case '[':
        if (++depth > max_depth) {
          return Status::InvalidArgument("JSON: nesting deeper than " + std::to_string(max_depth) +
                                         " levels");
        }
        if (depth == 2 && c == '[' && root_is_object && key_is_items) {
          in_items = true;
          expect_item = true;
        }
        break;
      case '}':
      case ']':
        --depth;
        if (depth == 1) in_items = false;
        if (depth == 0) {
          span->end = pos + 1;
          return Status::Ok();
        }
        if (depth < 0) return Status::InvalidArgument("JSON: unbalanced brackets");
        break;
      case ':':
        if (depth == 1) key_is_items = last_string == "items";
        break;
      case ',':
        if (depth == 1) key_is_items = false;
        if (depth == 2 && in_items) expect_item = true;
        break;
      default:
        break;
    }
  }
  return Status::InvalidArgument("JSON: unexpected end of input (unclosed '{' or '[')");
}

}  // namespace

RawResult LoadJson(std::string_view text, const LoadOptions& options) {
  RawResult out;
  size_t pos = 0;
  int line = 1;
  while (true) {
    while (pos < text.size() && IsSpace(text[pos])) {
      if (text[pos] == '\n') ++line;
      ++pos;
    }
    if (pos >= text.size()) return out;
    if (text[pos] != '{' && text[pos] != '[') {
      out.status =
          Status::InvalidArgument("JSON: expected '{' or '[' to start the next document, found '" +
                                  std::string(1, text[pos]) + "'");
      out.error_line = line;
      return out;
    }
    Span span;
    span.begin = pos;
    span.line = line;
    Status s = ScanValue(text, pos, &line, options.max_depth, &span);
    if (!s.ok()) {
      out.status = s;
      out.error_line = line;
      return out;
    }
    std::string_view body = text.substr(span.begin, span.end - span.begin);
    try {
      RawDocument doc{nlohmann::json::parse(body), span.line, std::move(span.item_lines)};
      if (!doc.value.is_null()) out.documents.push_back(std::move(doc));
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
    }
    pos = span.end;
  }
}

}  // namespace switchboard::api::internal
