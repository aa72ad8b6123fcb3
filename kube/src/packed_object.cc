#include "switchboard/kube/packed_object.h"

#include <cstdint>
#include <vector>

namespace switchboard::kube {
namespace {

// Tells a packed object from any other binary value (a packed member,
// api/packed.h, has none).
constexpr std::uint8_t kSubtype = 0x6b;

// Lengths are 4 bytes, little-endian: a key or a version longer than a
// u16 is not an object the API server returns, but a corrupt length must
// not read past the end.
void PutString(std::vector<std::uint8_t>& out, std::string_view s) {
  const auto n = static_cast<std::uint32_t>(s.size());
  for (int i = 0; i < 4; i++) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  out.insert(out.end(), s.begin(), s.end());
}

// Reads a length-prefixed string at `pos`, advancing it; false when the
// bytes end first.
bool GetString(const std::vector<std::uint8_t>& in, size_t& pos, std::string_view* s) {
  if (pos > in.size() || in.size() - pos < 4) return false;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; i++) n |= static_cast<std::uint32_t>(in[pos + i]) << (8 * i);
  pos += 4;
  if (in.size() - pos < n) return false;
  *s = std::string_view(reinterpret_cast<const char*>(in.data() + pos), n);
  pos += n;
  return true;
}

}  // namespace

json PackObject(const json& object) {
  std::vector<std::uint8_t> bytes;
  PutString(bytes, ObjectKeyOf(object));
  PutString(bytes, ResourceVersionOf(object));
  json::to_msgpack(object, bytes);
  bytes.shrink_to_fit();
  return json::binary(std::move(bytes), kSubtype);
}

bool IsPackedObject(const json& value) {
  return value.is_binary() && value.get_binary().has_subtype() &&
         value.get_binary().subtype() == kSubtype;
}

json UnpackObject(const json& value) {
  if (!IsPackedObject(value)) return value;
  const auto& bytes = value.get_binary();
  size_t pos = 0;
  std::string_view key, rv;
  if (!GetString(bytes, pos, &key) || !GetString(bytes, pos, &rv)) return json();
  json out = json::from_msgpack(bytes.begin() + static_cast<std::ptrdiff_t>(pos), bytes.end(),
                                /*strict=*/true, /*allow_exceptions=*/false);
  return out.is_discarded() ? json() : out;
}

std::string CachedKeyOf(const json& value) {
  if (!IsPackedObject(value)) return ObjectKeyOf(value);
  size_t pos = 0;
  std::string_view key;
  return GetString(value.get_binary(), pos, &key) ? std::string(key) : std::string();
}

std::string CachedVersionOf(const json& value) {
  if (!IsPackedObject(value)) return ResourceVersionOf(value);
  size_t pos = 0;
  std::string_view key, rv;
  if (!GetString(value.get_binary(), pos, &key) || !GetString(value.get_binary(), pos, &rv)) {
    return std::string();
  }
  return std::string(rv);
}

}  // namespace switchboard::kube
