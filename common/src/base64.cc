#include "switchboard/common/base64.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace switchboard::base64 {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<uint8_t, 256> MakeDecodeTable() {
  std::array<uint8_t, 256> t{};
  for (auto& v : t) v = 0xff;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<uint8_t>(i);
  return t;
}
constexpr auto kDecode = MakeDecodeTable();

// Two output characters per 12 input bits: halves the lookups on encode.
struct PairTable {
  char v[4096][2];
  constexpr PairTable() : v() {
    for (int i = 0; i < 4096; ++i) {
      v[i][0] = kAlphabet[i >> 6];
      v[i][1] = kAlphabet[i & 63];
    }
  }
};
constexpr PairTable kPairs;

// 12 output bits per two input characters (0xffff: invalid); built once.
const uint16_t* DecodePairs() {
  static const auto* table = [] {
    auto* t = new uint16_t[65536];
    for (int i = 0; i < 65536; ++i) {
      uint8_t a = kDecode[i & 0xff], b = kDecode[i >> 8];  // little-endian load order
      t[i] = (a | b) & 0x80 ? 0xffff : static_cast<uint16_t>((a << 6) | b);
    }
    return t;
  }();
  return table;
}

// Slow path: strips \r and \n (Go's decoder ignores them) and decodes.
bool DecodeWithNewlines(std::string_view in, std::string* out) {
  std::string clean;
  clean.reserve(in.size());
  for (char c : in) {
    if (c != '\r' && c != '\n') clean.push_back(c);
  }
  if (clean.size() == in.size()) return false;
  return Decode(clean, out);
}

}  // namespace

size_t EncodedSize(size_t n) { return (n + 2) / 3 * 4; }

void EncodeTo(std::string_view in, std::string* out) {
  size_t start = out->size();
  out->resize(start + EncodedSize(in.size()));
  char* o = out->data() + start;
  const auto* p = reinterpret_cast<const uint8_t*>(in.data());
  size_t n = in.size(), i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    std::memcpy(o, kPairs.v[v >> 12], 2);
    std::memcpy(o + 2, kPairs.v[v & 0xfff], 2);
    o += 4;
  }
  if (size_t rest = n - i; rest > 0) {
    uint32_t v = uint32_t{p[i]} << 16;
    if (rest == 2) v |= uint32_t{p[i + 1]} << 8;
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    o[3] = '=';
  }
}

namespace {

bool DecodeCore(std::string_view in, std::string* out, bool allow_newlines);

}  // namespace

std::string Encode(std::string_view in) {
  std::string out;
  EncodeTo(in, &out);
  return out;
}

bool Decode(std::string_view in, std::string* out) { return DecodeCore(in, out, true); }

std::optional<std::string> Decode(std::string_view in) {
  std::string out;
  if (!Decode(in, &out)) return std::nullopt;
  return out;
}

bool DecodeStrict(std::string_view in, std::string* out) { return DecodeCore(in, out, false); }

// The URL alphabet differs in two characters; translating keeps one table
// and one decoder for both.
std::string EncodeUrl(std::string_view in) {
  std::string out = Encode(in);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

bool DecodeUrl(std::string_view in, std::string* out) {
  out->clear();
  if (in.size() % 4 == 1) return false;
  std::string std_form;
  std_form.reserve(in.size() + 2);
  for (char c : in) {
    if (c == '+' || c == '/' || c == '=') return false;
    std_form.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  std_form.append((4 - in.size() % 4) % 4, '=');
  return DecodeCore(std_form, out, false);
}

std::optional<std::string> DecodeUrl(std::string_view in) {
  std::string out;
  if (!DecodeUrl(in, &out)) return std::nullopt;
  return out;
}

namespace {

bool DecodeCore(std::string_view in, std::string* out, bool allow_newlines) {
  auto fallback = [&] { return allow_newlines && DecodeWithNewlines(in, out); };
  out->clear();
  if (in.size() % 4 != 0) return fallback();
  if (in.empty()) return true;
  out->resize(in.size() / 4 * 3);
  auto* o = reinterpret_cast<uint8_t*>(out->data());
  const auto* p = reinterpret_cast<const uint8_t*>(in.data());
  size_t n = in.size();
  size_t full = n - 4;  // the last quantum may carry padding
  size_t w = 0;
  const uint16_t* pairs = DecodePairs();
  for (size_t i = 0; i < full; i += 4) {
    uint32_t hi = pairs[p[i] | (p[i + 1] << 8)], lo = pairs[p[i + 2] | (p[i + 3] << 8)];
    if ((hi | lo) & 0x8000) return fallback();
    uint32_t v = (hi << 12) | lo;
    o[w] = static_cast<uint8_t>(v >> 16);
    o[w + 1] = static_cast<uint8_t>(v >> 8);
    o[w + 2] = static_cast<uint8_t>(v);
    w += 3;
  }
  const uint8_t* q = p + full;
  uint32_t a = kDecode[q[0]], b = kDecode[q[1]];
  if ((a | b) & 0x80) return fallback();
  if (q[2] == '=') {
    // "xx==": the unused bits must be zero (Go's strict mode is off, but a
    // non-canonical tail is still decoded the same; accept it).
    if (q[3] != '=') return false;
    o[w++] = static_cast<uint8_t>((a << 2) | (b >> 4));
  } else if (q[3] == '=') {
    uint32_t c = kDecode[q[2]];
    if (c & 0x80) return fallback();
    uint32_t v = (a << 18) | (b << 12) | (c << 6);
    o[w++] = static_cast<uint8_t>(v >> 16);
    o[w++] = static_cast<uint8_t>(v >> 8);
  } else {
    uint32_t c = kDecode[q[2]], d = kDecode[q[3]];
    if ((c | d) & 0x80) return fallback();
    uint32_t v = (a << 18) | (b << 12) | (c << 6) | d;
    o[w++] = static_cast<uint8_t>(v >> 16);
    o[w++] = static_cast<uint8_t>(v >> 8);
    o[w++] = static_cast<uint8_t>(v);
  }
  out->resize(w);
  return true;
}

}  // namespace

}  // namespace switchboard::base64
