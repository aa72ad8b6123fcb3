#include "switchboard/pubsub/codec.h"

#include <charconv>
#include <limits>

#include "json_reader.h"
#include "json_writer.h"
#include "switchboard/common/base64.h"
#include "switchboard/common/rfc3339.h"
#include "uuid.h"

namespace switchboard::pubsub {

using internal::JsonReader;

size_t Message::PayloadBytes() const {
  size_t n = 0;
  if (payloads) {
    for (const auto& p : *payloads) n += p.size();
  }
  return n;
}

Timestamp Timestamp::FromSystemClock(std::chrono::system_clock::time_point t) {
  rfc3339::Time r = rfc3339::FromSystemClock(t);
  return Timestamp{r.unix_seconds, r.nanos, r.utc_offset_seconds};
}

std::chrono::system_clock::time_point Timestamp::ToSystemClock() const {
  return rfc3339::ToSystemClock({unix_seconds, nanos, utc_offset_seconds});
}

namespace {

// Go writes published_at only when it can (years 0..9999) and non-zero.
bool HasPublishedAt(const Message& m, std::string* text) {
  if (m.published_at.IsZero()) return false;
  const Timestamp& t = m.published_at;
  return rfc3339::FormatTo({t.unix_seconds, t.nanos, t.utc_offset_seconds},
                           rfc3339::Fraction::kTrimmed, text);
}

}  // namespace

void EncodeMessageTo(const Message& m, std::string* out) {
  // A cheap upper-ish estimate: payloads dominate; the rest is small.
  size_t estimate = 256 + m.id.size() * 6;
  if (m.payloads) {
    for (const auto& p : *m.payloads) estimate += base64::EncodedSize(p.size()) + 3;
  }
  out->reserve(out->size() + estimate);
  out->append("{\"id\":");
  internal::AppendJsonString(m.id, out);
  out->append(",\"messages\":");
  if (!m.payloads) {
    out->append("null");
  } else {
    out->push_back('[');
    bool first = true;
    for (const auto& p : *m.payloads) {
      if (!first) out->push_back(',');
      first = false;
      out->push_back('"');
      base64::EncodeTo(p, out);
      out->push_back('"');
    }
    out->push_back(']');
  }
  out->append(",\"tenant_id\":");
  internal::AppendJsonString(m.tenant_id, out);
  out->append(m.immediately_expire ? ",\"immediately_expire\":true"
                                   : ",\"immediately_expire\":false");
  out->append(m.persistent ? ",\"persistent\":true" : ",\"persistent\":false");
  out->append(",\"otel_carrier\":");
  if (!m.otel_carrier) {
    out->append("null");
  } else {
    out->push_back('{');
    bool first = true;
    for (const auto& [k, v] : *m.otel_carrier) {  // std::map: sorted bytewise, like Go
      if (!first) out->push_back(',');
      first = false;
      internal::AppendJsonString(k, out);
      out->push_back(':');
      internal::AppendJsonString(v, out);
    }
    out->push_back('}');
  }
  out->append(",\"retries\":");
  out->append(std::to_string(m.retries));
  if (m.compressed) out->append(",\"compressed\":true");
  std::string t;
  if (HasPublishedAt(m, &t)) {
    out->append(",\"published_at\":\"");
    out->append(t);
    out->push_back('"');
  }
  out->push_back('}');
}

std::string EncodeMessage(const Message& message) {
  std::string out;
  EncodeMessageTo(message, &out);
  return out;
}

size_t EncodedSize(const Message& m) {
  size_t n = std::string_view(
                 "{\"id\":,\"messages\":,\"tenant_id\":,\"immediately_expire\":,"
                 "\"persistent\":,\"otel_carrier\":,\"retries\":}")
                 .size();
  n += internal::JsonStringSize(m.id);
  if (!m.payloads) {
    n += 4;
  } else {
    n += 2 + (m.payloads->empty() ? 0 : m.payloads->size() - 1);
    for (const auto& p : *m.payloads) n += 2 + base64::EncodedSize(p.size());
  }
  n += internal::JsonStringSize(m.tenant_id);
  n += m.immediately_expire ? 4 : 5;
  n += m.persistent ? 4 : 5;
  if (!m.otel_carrier) {
    n += 4;
  } else {
    n += 2 + (m.otel_carrier->empty() ? 0 : m.otel_carrier->size() - 1);
    for (const auto& [k, v] : *m.otel_carrier) {
      n += internal::JsonStringSize(k) + 1 + internal::JsonStringSize(v);
    }
  }
  n += std::to_string(m.retries).size();
  if (m.compressed) n += std::string_view(",\"compressed\":true").size();
  std::string t;
  if (HasPublishedAt(m, &t)) n += std::string_view(",\"published_at\":\"\"").size() + t.size();
  return n;
}

namespace {

enum class Field {
  kUnknown,
  kId,
  kMessages,
  kTenantId,
  kImmediatelyExpire,
  kPersistent,
  kOtelCarrier,
  kRetries,
  kCompressed,
  kPublishedAt
};

// Folds a key the way Go matches struct fields case-insensitively: ASCII
// letters lowercased, and the non-ASCII runes whose simple folding lands on
// an ASCII letter (K KELVIN SIGN, LATIN SMALL LONG S, dotted/dotless I).
// Returns false when a rune cannot match any of our (ASCII) field names.
bool FoldKey(std::string_view key, std::string* out) {
  out->clear();
  for (size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (c < 0x80) {
      out->push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
      continue;
    }
    std::string_view rest = key.substr(i);
    if (rest.starts_with("\xE2\x84\xAA")) {  // U+212A KELVIN SIGN
      out->push_back('k');
      i += 2;
    } else if (rest.starts_with("\xC5\xBF")) {  // U+017F LATIN SMALL LETTER LONG S
      out->push_back('s');
      i += 1;
    } else if (rest.starts_with("\xC4\xB0") || rest.starts_with("\xC4\xB1")) {  // U+0130, U+0131
      out->push_back('i');
      i += 1;
    } else {
      return false;
    }
  }
  return true;
}

Field Lookup(std::string_view key) {
  struct Entry {
    std::string_view name;
    Field field;
  };
  static constexpr Entry kFields[] = {
      {"id", Field::kId},
      {"messages", Field::kMessages},
      {"tenant_id", Field::kTenantId},
      {"immediately_expire", Field::kImmediatelyExpire},
      {"persistent", Field::kPersistent},
      {"otel_carrier", Field::kOtelCarrier},
      {"retries", Field::kRetries},
      {"compressed", Field::kCompressed},
      {"published_at", Field::kPublishedAt},
  };
  for (const auto& e : kFields) {
    if (key == e.name) return e.field;  // exact match first, as Go does
  }
  std::string folded;
  if (!FoldKey(key, &folded)) return Field::kUnknown;
  for (const auto& e : kFields) {
    if (folded == e.name) return e.field;
  }
  return Field::kUnknown;
}

class Decoder {
 public:
  explicit Decoder(std::string_view json) : r_(json) {}

  bool saw_payloads() const { return saw_payloads_; }

  Status Run(Message* m) {
    if (!Object(m)) return Status::InvalidArgument("decode hatchet message: " + r_.error());
    if (!r_.AtEnd()) {
      r_.Fail("extra data after the message object");
      return Status::InvalidArgument("decode hatchet message: " + r_.error());
    }
    return Status::Ok();
  }

 private:
  // A type mismatch names the field and what Go would have wanted.
  bool Mismatch(std::string_view field, std::string_view want) {
    return r_.Fail(std::string(field) + ": want " + std::string(want) + ", got " + Kind());
  }

  std::string Kind() {
    switch (r_.Peek()) {
      case '"':
        return "string";
      case '{':
        return "object";
      case '[':
        return "array";
      case 't':
      case 'f':
        return "bool";
      case '\0':
        return "end of input";
      default:
        return "number";
    }
  }

  bool Object(Message* m) {
    if (r_.ConsumeNull()) return true;  // Go: null into a struct is a no-op
    if (!r_.Consume('{')) return r_.Fail("want a JSON object (the hatchet message), got " + Kind());
    if (r_.Consume('}')) return true;
    std::string key_buf;
    std::string_view key;
    while (true) {
      if (r_.Peek() != '"') return r_.Fail("want an object key");
      if (!r_.ReadString(&key, &key_buf)) return false;
      if (!r_.Consume(':')) return r_.Fail("want ':' after object key");
      if (!Value(Lookup(key), m)) return false;
      if (r_.Consume(',')) continue;
      if (r_.Consume('}')) return true;
      return r_.Fail("want ',' or '}' in the message object");
    }
  }

  bool String(std::string_view field, std::string* out) {
    if (r_.ConsumeNull()) return true;
    if (r_.Peek() != '"') return Mismatch(field, "a string");
    std::string_view v;
    std::string owned;
    if (!r_.ReadString(&v, &owned)) return false;
    out->assign(v);
    return true;
  }

  bool Bool(std::string_view field, bool* out) {
    if (r_.ConsumeNull()) return true;
    char c = r_.Peek();
    if (c != 't' && c != 'f') return Mismatch(field, "true or false");
    return r_.ReadBool(out);
  }

  bool Value(Field f, Message* m) {
    switch (f) {
      case Field::kUnknown:
        return r_.SkipValue();  // Go ignores unknown keys
      case Field::kId:
        return String("id", &m->id);
      case Field::kTenantId: {
        if (r_.ConsumeNull()) return true;
        std::string text;
        if (!String("tenant_id", &text)) return false;
        if (internal::IsCanonicalUuid(text)) {
          m->tenant_id.assign(text);
          return true;
        }
        auto uuid = internal::NormalizeUuid(text);
        if (!uuid) {
          return r_.Fail("tenant_id: \"" + text.substr(0, 64) +
                         "\" is not a UUID (want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
        }
        m->tenant_id = *uuid;
        return true;
      }
      case Field::kImmediatelyExpire:
        return Bool("immediately_expire", &m->immediately_expire);
      case Field::kPersistent:
        return Bool("persistent", &m->persistent);
      case Field::kCompressed:
        return Bool("compressed", &m->compressed);
      case Field::kMessages:
        return Payloads(m);
      case Field::kOtelCarrier:
        return Carrier(m);
      case Field::kRetries:
        return Retries(m);
      case Field::kPublishedAt: {
        if (r_.ConsumeNull()) return true;
        std::string text;
        if (!String("published_at", &text)) return false;
        auto t = rfc3339::Parse(text);
        if (!t.ok()) return r_.Fail("published_at: " + t.status().message());
        m->published_at = Timestamp{t->unix_seconds, t->nanos, t->utc_offset_seconds};
        return true;
      }
    }
    return false;
  }

  bool Payloads(Message* m) {
    saw_payloads_ = true;
    if (r_.ConsumeNull()) {
      m->payloads.reset();
      return true;
    }
    if (!r_.Consume('[')) return Mismatch("messages", "an array of base64 strings");
    // Reuse the existing payload strings' capacity (DecodeMessageInto).
    if (!m->payloads) m->payloads.emplace();
    std::vector<std::string>& out = *m->payloads;
    size_t n = 0;
    if (!r_.Consume(']')) {
      std::string owned;
      std::string_view v;
      while (true) {
        if (n == out.size()) out.emplace_back();
        std::string& p = out[n++];
        p.clear();
        if (!r_.ConsumeNull()) {  // null element: Go's nil []byte, an empty payload here
          if (r_.Peek() != '"') {
            return Mismatch("messages[" + std::to_string(n - 1) + "]", "a base64 string");
          }
          // Base64 has no quote, backslash, control or non-ASCII bytes, so
          // a raw span that decodes strictly is exactly the JSON string.
          std::string_view raw;
          if (r_.PeekRawString(&raw) && base64::DecodeStrict(raw, &p)) {
            r_.ConsumeRawString(raw.size());
          } else if (!r_.ReadString(&v, &owned)) {
            return false;
          } else if (!base64::Decode(v, &p)) {
            return r_.Fail("messages[" + std::to_string(n - 1) +
                           "]: invalid base64 (want standard base64 with padding)");
          }
        }
        if (r_.Consume(',')) continue;
        if (r_.Consume(']')) break;
        return r_.Fail("messages: want ',' or ']'");
      }
    }
    out.resize(n);
    return true;
  }

  bool Carrier(Message* m) {
    if (r_.ConsumeNull()) {
      m->otel_carrier.reset();
      return true;
    }
    if (!r_.Consume('{')) return Mismatch("otel_carrier", "an object of strings");
    if (!m->otel_carrier) m->otel_carrier.emplace();
    if (r_.Consume('}')) return true;
    std::string key_buf;
    std::string_view key;
    while (true) {
      if (r_.Peek() != '"') return r_.Fail("otel_carrier: want an object key");
      if (!r_.ReadString(&key, &key_buf)) return false;
      std::string k(key);
      if (!r_.Consume(':')) return r_.Fail("otel_carrier: want ':'");
      std::string v;
      if (!String("otel_carrier[\"" + k.substr(0, 64) + "\"]", &v)) return false;
      (*m->otel_carrier)[std::move(k)] = std::move(v);
      if (r_.Consume(',')) continue;
      if (r_.Consume('}')) return true;
      return r_.Fail("otel_carrier: want ',' or '}'");
    }
  }

  bool Retries(Message* m) {
    if (r_.ConsumeNull()) return true;
    char c = r_.Peek();
    if (c != '-' && (c < '0' || c > '9')) return Mismatch("retries", "an integer");
    std::string_view text;
    if (!r_.ReadNumber(&text)) return false;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) {
      return r_.Fail("retries: " + std::string(text.substr(0, 32)) + " overflows a 64-bit integer");
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      return r_.Fail("retries: " + std::string(text.substr(0, 32)) + " is not an integer");
    }
    m->retries = v;
    return true;
  }

  JsonReader r_;
  bool saw_payloads_ = false;
};

}  // namespace

Result<Message> DecodeMessage(std::string_view json) {
  Message m;
  Status s = Decoder(json).Run(&m);
  if (!s.ok()) return s;
  return m;
}

Status DecodeMessageInto(std::string_view json, Message* message) {
  // Back to Go's zero values, keeping the strings' and vectors' capacity.
  message->id.clear();
  message->tenant_id.assign(kNilTenantId);
  message->immediately_expire = false;
  message->persistent = false;
  message->otel_carrier.reset();
  message->retries = 0;
  message->compressed = false;
  message->published_at = Timestamp{};
  Decoder decoder(json);
  Status s = decoder.Run(message);
  // Payload strings are reused by index; without a "messages" key the field
  // is Go's nil.
  if (!decoder.saw_payloads()) message->payloads.reset();
  return s;
}

}  // namespace switchboard::pubsub
