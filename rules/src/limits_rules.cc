// Values of the installation limits (PubSubBackend spec.nats.limits,
// NatsServer spec.installationLimits) and the byte quantities both CRDs
// share. What a limit means against a server is a cross-object rule
// (cross_index.cc).
#include "rules.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/quantity.h"
#include "switchboard/api/values.h"

namespace switchboard::rules::internal {
namespace {

// The CRD's pattern for quantity strings: ^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|k|M|G)?$
// (the API server rejects other forms, so the CLI must too).
bool CrdQuantityForm(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  std::string_view suffix = s.substr(i);
  return suffix.empty() || suffix == "Ki" || suffix == "Mi" || suffix == "Gi" || suffix == "k" ||
         suffix == "M" || suffix == "G";
}

bool Present(const nlohmann::json* v) { return v != nullptr && !v->is_null(); }

}  // namespace

std::optional<int64_t> ByteQuantity(const nlohmann::json* v, const std::string& field, Sink& sink) {
  if (v == nullptr || v->is_null() || !(v->is_number() || v->is_string())) return std::nullopt;
  if (v->is_string() && !CrdQuantityForm(v->get_ref<const std::string&>())) {
    sink.Error("quantity", field,
               Quote(v->get_ref<const std::string&>()) +
                   " is not an accepted size; write bytes (16777216) or a number with Ki, Mi, Gi, "
                   "k, M or G (16Mi)");
    return std::nullopt;
  }
  auto r = api::ParseQuantity(*v);
  if (!r.ok()) {
    sink.Error("quantity", field, r.status().message());
    return std::nullopt;
  }
  return *r;
}

bool LimitsSet(const nlohmann::json* block) {
  return Present(api::Field(block, "maxConnections")) ||
         Present(api::Field(block, "maxSubscriptions")) || Present(api::Field(block, "maxPayload"));
}

api::InstallationLimits CheckLimitsBlock(const nlohmann::json* block, const std::string& field,
                                         Sink& sink) {
  api::InstallationLimits out;
  if (block == nullptr || !block->is_object()) return out;
  // Wrong types are the schema's (a string, a fraction): not judged again;
  // a whole number too large for int64 is out of range like any other.
  auto count = [&](std::string_view name, std::string (*check)(int64_t)) -> std::optional<int64_t> {
    const auto* v = api::Field(block, name);
    const std::string path = field + "." + std::string(name);
    if (v != nullptr && v->is_number_unsigned() && !api::Integer(v)) {
      sink.Error("installation-limits", path, check(INT64_MAX));
      return std::nullopt;
    }
    auto n = api::Integer(v);
    if (!n) return std::nullopt;
    if (std::string err = check(*n); !err.empty()) {
      sink.Error("installation-limits", path, std::move(err));
      return std::nullopt;
    }
    return n;
  };
  out.max_connections = count("maxConnections", api::CheckMaxConnections);
  out.max_subscriptions = count("maxSubscriptions", api::CheckMaxSubscriptions);
  const std::string payload_field = field + ".maxPayload";
  if (auto bytes = ByteQuantity(api::Field(block, "maxPayload"), payload_field, sink)) {
    if (std::string err = api::CheckMaxPayload(*bytes); !err.empty()) {
      sink.Error("installation-limits", payload_field, std::move(err));
    } else {
      out.max_payload = bytes;
    }
  }
  return out;
}

}  // namespace switchboard::rules::internal
