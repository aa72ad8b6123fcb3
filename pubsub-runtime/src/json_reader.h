// A small pull scanner over JSON text, strict like Go's encoding/json
// scanner (RFC 8259 grammar, control characters refused in strings, nesting
// capped at 10000). Errors carry the byte offset. No allocation beyond the
// strings it returns; big strings without escapes are returned as views.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace switchboard::pubsub::internal {

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  // Skips whitespace and returns the next byte without consuming it; 0 at end.
  char Peek() {
    if (pos_ < s_.size() && static_cast<unsigned char>(s_[pos_]) > ' ') return s_[pos_];
    SkipWs();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  // Consumes `c` (after whitespace) if it is next.
  bool Consume(char c);
  // Consumes the literal null / true / false.
  bool ConsumeNull();
  bool ReadBool(bool* out);
  // Reads a JSON string. When it has no escapes *view points into the input
  // and *owned is untouched; otherwise *owned holds the unescaped text and
  // *view refers to it. Invalid UTF-8 becomes U+FFFD, as in Go.
  bool ReadString(std::string_view* view, std::string* owned);
  // Fast path for strings whose caller validates every byte (base64): the
  // raw bytes up to the next '"', consuming nothing. Only when every byte
  // is valid for the caller may it ConsumeRawString; otherwise it must fall
  // back to ReadString (escapes, control characters, UTF-8).
  bool PeekRawString(std::string_view* raw);
  void ConsumeRawString(size_t raw_size) { pos_ += raw_size + 2; }
  // Reads a number token (validated grammar) as text.
  bool ReadNumber(std::string_view* text);
  // Skips any value (validating it).
  bool SkipValue();
  // True when only whitespace remains.
  bool AtEnd();

  size_t offset() const { return pos_; }
  const std::string& error() const { return error_; }
  bool Fail(std::string what);

 private:
  void SkipWs();
  bool ReadHex4(uint32_t* out);
  bool ExpectLiteral(std::string_view lit);

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace switchboard::pubsub::internal
