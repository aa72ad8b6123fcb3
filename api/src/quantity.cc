#include "switchboard/api/quantity.h"

#include <cmath>
#include <limits>

#include "switchboard/common/numeric.h"

namespace switchboard::api {
namespace {

constexpr int kMaxDigits = 18;  // every 18-digit decimal fits in int64

Status Bad(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("\"" + std::string(text) + "\" is not a valid quantity (" +
                                 std::string(why) + "); write bytes like 16777216 or 16Mi");
}

bool MulChecked(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

Result<int64_t> ParseQuantity(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) return Bad(text, "empty");
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  int64_t mantissa = 0;
  int digits = 0;
  int frac_digits = 0;
  bool seen_dot = false;
  bool seen_digit = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.' && !seen_dot) {
      seen_dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    seen_digit = true;
    if (mantissa == 0 && c == '0' && !seen_dot) continue;  // leading zeros
    if (++digits > kMaxDigits) return Bad(text, "too many digits");
    mantissa = mantissa * 10 + (c - '0');
    if (seen_dot) ++frac_digits;
  }
  if (!seen_digit) return Bad(text, "no digits");
  std::string_view suffix = s.substr(i);

  int binary_shift = 0;  // multiply by 2^shift
  int decimal_exp = 0;   // multiply by 10^exp
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    switch (suffix[0]) {
      case 'K':
        binary_shift = 10;
        break;
      case 'M':
        binary_shift = 20;
        break;
      case 'G':
        binary_shift = 30;
        break;
      case 'T':
        binary_shift = 40;
        break;
      case 'P':
        binary_shift = 50;
        break;
      case 'E':
        binary_shift = 60;
        break;
      default:
        return Bad(text, "unknown suffix \"" + std::string(suffix) + "\"");
    }
  } else if (suffix.size() == 1 &&
             std::string_view("mkMGTPE").find(suffix[0]) != std::string_view::npos) {
    switch (suffix[0]) {
      case 'm':
        decimal_exp = -3;
        break;
      case 'k':
        decimal_exp = 3;
        break;
      case 'M':
        decimal_exp = 6;
        break;
      case 'G':
        decimal_exp = 9;
        break;
      case 'T':
        decimal_exp = 12;
        break;
      case 'P':
        decimal_exp = 15;
        break;
      case 'E':
        decimal_exp = 18;
        break;
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty() || e.size() > 3) return Bad(text, "bad exponent");
    int v = 0;
    for (char c : e) {
      if (c < '0' || c > '9') return Bad(text, "bad exponent");
      v = v * 10 + (c - '0');
    }
    decimal_exp = eneg ? -v : v;
  } else {
    return Bad(text, "unknown suffix \"" + std::string(suffix) + "\"");
  }

  // value = mantissa * 2^shift * 10^(decimal_exp - frac_digits), exactly.
  int64_t value = mantissa;
  int exp10 = decimal_exp - frac_digits;
  while (exp10 > 0) {
    if (value != 0 && !MulChecked(value, 10, &value)) return Bad(text, "too large");
    if (value == 0) break;
    --exp10;
  }
  if (binary_shift > 0 && value != 0) {
    if (value > (std::numeric_limits<int64_t>::max() >> binary_shift))
      return Bad(text, "too large");
    value <<= binary_shift;
  }
  while (exp10 < 0) {
    if (value % 10 != 0) return Bad(text, "not a whole number of bytes");
    value /= 10;
    ++exp10;
  }
  return negative ? -value : value;
}

Result<int64_t> ParseQuantity(const nlohmann::json& value) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidArgument("value is too large; write bytes like 16777216 or 16Mi");
    }
    return value.get<int64_t>();
  }
  if (value.is_number_float()) {
    auto whole = WholeToInt64(value.get<double>());
    if (!whole) {
      return Status::InvalidArgument("must be a whole number of bytes; write 16777216 or 16Mi");
    }
    return *whole;
  }
  if (value.is_string())
    return ParseQuantity(std::string_view(value.get_ref<const std::string&>()));
  return Status::InvalidArgument("must be an integer or a quantity string like \"16Mi\"");
}

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kSuffix[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (bytes == 0) return "0";
  int unit = -1;
  int64_t v = bytes;
  while (unit < 5 && v % 1024 == 0) {
    v /= 1024;
    ++unit;
  }
  return std::to_string(v) + (unit >= 0 ? kSuffix[unit] : "");
}

}  // namespace switchboard::api
