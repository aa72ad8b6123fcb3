// PubSubBackend rules that need only the object itself.
#include <cctype>

#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/api/values.h"
#include "switchboard/api/views.h"
#include "switchboard/common/duration.h"

namespace switchboard::rules::internal {
namespace {

using api::Field;
using api::Path;

constexpr std::string_view kKinds[] = {api::kBackendNats, api::kBackendRabbitmq,
                                       api::kBackendPostgres};

void CheckName(const nlohmann::json* v, const std::string& field, Sink& sink, bool label = false) {
  auto s = api::String(v);
  if (!s) return;  // absent or wrong type: reported elsewhere
  std::string err = label ? api::CheckDnsLabel(*s) : api::CheckDnsSubdomain(*s);
  if (!err.empty()) sink.Error("name", field, Quote(*s) + " " + err);
}

void CheckSecretRef(const nlohmann::json* ref, const std::string& field, bool key_required,
                    Sink& sink) {
  if (ref == nullptr || !ref->is_object()) return;
  CheckName(Field(ref, "name"), field + ".name", sink);
  const auto* key = Field(ref, "key");
  if (auto k = api::String(key)) {
    if (std::string err = api::CheckSecretKey(*k); !err.empty()) {
      sink.Error("secret-ref", field + ".key", Quote(*k) + " " + err);
    }
  } else if (key_required && (key == nullptr || key->is_null())) {
    sink.Error("required", field + ".key", "required; name the key of the Secret's data");
  }
}

// An integer limit with a minimum. Wrong types are reported by the schema.
// A connection or channel count within [min, max], the CRD's bounds. A value
// the type check already refused (a string, a fraction) is not judged again;
// a whole number too large for int64 is out of range like any other.
std::optional<int64_t> CheckLimit(const nlohmann::json* v, const std::string& field, int64_t min,
                                  int64_t max, Sink& sink) {
  auto n = api::Integer(v);
  if (!n) {
    if (v != nullptr && v->is_number_unsigned()) {
      sink.Error("limits", field, "must be at most " + std::to_string(max));
    }
    return std::nullopt;
  }
  if (*n < 0) {
    sink.Error("limits", field,
               "must not be negative (got " + std::to_string(*n) + "); use " + std::to_string(min) +
                   " or more");
  } else if (*n < min) {
    sink.Error("limits", field,
               "must be at least " + std::to_string(min) + " (got " + std::to_string(*n) + ")");
  } else if (*n > max) {
    sink.Error("limits", field,
               "must be at most " + std::to_string(max) + " (got " + std::to_string(*n) + ")");
  }
  return n;
}

// The CRD's pattern and length bounds (api::CheckUsername). The value may
// be the default <namespace>-<name>, which can be longer than a user name
// may be.
void CheckUsername(std::string_view user, Sink& sink) {
  if (std::string err = api::CheckUsername(user); !err.empty()) {
    sink.Error("username", "spec.nats.credentials.username", std::move(err));
  }
}

void CheckNatsBlock(const nlohmann::json& object, Sink& sink) {
  const auto* nats = Path(object, {"spec", "nats"});
  const auto* ref = Field(nats, "serverRef");
  CheckName(Field(ref, "name"), "spec.nats.serverRef.name", sink);
  CheckName(Field(ref, "namespace"), "spec.nats.serverRef.namespace", sink, /*label=*/true);
  if (auto prefix = api::String(Field(nats, "subjectPrefix"))) {
    CheckSubjectPrefix(*prefix, "spec.nats.subjectPrefix", sink);
  }
  CheckLimitsBlock(Field(nats, "limits"), "spec.nats.limits", sink);
  const auto* creds = Field(nats, "credentials");
  if (auto user = api::String(Field(creds, "username"))) CheckUsername(*user, sink);
  CheckSecretRef(Field(creds, "passwordSecretRef"), "spec.nats.credentials.passwordSecretRef",
                 /*key_required=*/false, sink);  // key defaults to "password"
  if (auto grace = api::String(Field(creds, "rotationGracePeriod"))) {
    auto d = switchboard::ParseDuration(*grace);
    if (!d.ok()) {
      sink.Error("duration", "spec.nats.credentials.rotationGracePeriod", d.status().message());
    } else if (*d < 0) {
      sink.Error("duration", "spec.nats.credentials.rotationGracePeriod",
                 "must not be negative; use e.g. 10m");
    } else if (*d == 0) {
      sink.Warn("duration", "spec.nats.credentials.rotationGracePeriod",
                "0 removes the old password at once: running engines lose their connection "
                "on a rotation; give them time to restart (e.g. 10m)");
    }
  }
}

void CheckRabbitmqBlock(const nlohmann::json& object, Sink& sink) {
  const auto* rmq = Path(object, {"spec", "rabbitmq"});
  if (const auto* url = Field(rmq, "url"); url != nullptr && !url->is_null()) {
    // An inline URL would put the password into the object (and so into
    // etcd, kubectl output and GitOps repos): only a Secret reference.
    std::string scheme_note;
    if (auto s = api::String(url)) {
      bool amqp = s->rfind("amqp://", 0) == 0 || s->rfind("amqps://", 0) == 0;
      if (!amqp) scheme_note = " (and it must be amqp:// or amqps://)";
    }
    sink.Error("rabbitmq-url", "spec.rabbitmq.url",
               "inline URLs are not accepted" + scheme_note +
                   "; store the amqp:// or amqps:// URL in a Secret and reference it with "
                   "spec.rabbitmq.urlSecretRef {name, key}");
  }
  CheckSecretRef(Field(rmq, "urlSecretRef"), "spec.rabbitmq.urlSecretRef",
                 /*key_required=*/false, sink);  // key defaults to "url"
  CheckLimit(Field(rmq, "maxPubChans"), "spec.rabbitmq.maxPubChans", api::kMinRabbitmqChans,
             api::kMaxRabbitmqChans, sink);
  CheckLimit(Field(rmq, "maxSubChans"), "spec.rabbitmq.maxSubChans", api::kMinRabbitmqChans,
             api::kMaxRabbitmqChans, sink);
}

void CheckPostgresBlock(const nlohmann::json& object, Sink& sink) {
  const auto* pg = Path(object, {"spec", "postgres"});
  auto max = CheckLimit(Field(pg, "maxConns"), "spec.postgres.maxConns", api::kMinPostgresMaxConns,
                        api::kMaxPostgresConns, sink);
  auto min = CheckLimit(Field(pg, "minConns"), "spec.postgres.minConns", api::kMinPostgresMinConns,
                        api::kMaxPostgresConns, sink);
  if (max && min && *min >= api::kMinPostgresMinConns && *max >= api::kMinPostgresMaxConns &&
      *min > *max) {
    sink.Error("limits", "spec.postgres.minConns",
               "is " + std::to_string(*min) + ", more than spec.postgres.maxConns (" +
                   std::to_string(*max) + "); lower minConns or raise maxConns");
  }
}

}  // namespace

void CheckBackend(const nlohmann::json& object, const nlohmann::json& original, Sink& sink) {
  const auto* spec = Field(object, "spec");
  auto kind = api::String(Field(spec, "kind"));
  if (!kind) return;  // required/type reported by the schema
  bool known = false;
  for (auto k : kKinds) known |= *kind == k;
  if (!known) {
    std::string hint;
    for (auto k : kKinds) {
      std::string lower(*kind);
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == k) hint = " (did you mean \"" + std::string(k) + "\"? kinds are lowercase)";
    }
    sink.Error("kind", "spec.kind",
               Quote(*kind) + " is not a pub/sub kind" + hint + "; use nats, rabbitmq or postgres");
  }
  // Exactly the block of the kind: judged on the original so defaulting
  // cannot hide or create a block.
  const auto* ospec = Field(original, "spec");
  for (auto k : kKinds) {
    const auto* block = Field(ospec, k);
    bool present = block != nullptr && !block->is_null();
    if (present && known && *kind != k) {
      sink.Error("block-kind", "spec." + std::string(k),
                 "must not be set when spec.kind is " + std::string(*kind) +
                     "; remove it, or set spec.kind: " + std::string(k));
    }
    if (!present && *kind == k) {
      std::string example = k == api::kBackendNats ? "serverRef: {name: <NatsServer>}"
                            : k == api::kBackendRabbitmq
                                ? "urlSecretRef: {name: <Secret>, key: url}"
                                : "{} for the defaults";
      sink.Error("block-kind", "spec." + std::string(k),
                 "required when spec.kind is " + std::string(k) + "; add spec." + std::string(k) +
                     " with " + example);
    }
  }
  if (*kind == api::kBackendNats) CheckNatsBlock(object, sink);
  if (*kind == api::kBackendRabbitmq) CheckRabbitmqBlock(object, sink);
  if (*kind == api::kBackendPostgres) CheckPostgresBlock(object, sink);

  const auto* secret = Path(object, {"spec", "output", "secretName"});
  CheckName(secret, "spec.output.secretName", sink);
  // The env Secret is written by the operator; it must not be a Secret the
  // backend also reads or that holds its generated password.
  api::BackendView view(object);
  if (*kind == api::kBackendNats && !view.name().empty()) {
    std::string env = view.env_secret_name();
    auto pw = view.password_secret();
    if (pw && pw->name == env) {
      sink.Error("secret-collision", "spec.output.secretName",
                 Quote(env) +
                     " is also spec.nats.credentials.passwordSecretRef.name; the env Secret is "
                     "written by Switchboard: use a different name");
    } else if (!pw && env == api::DefaultCredentialsSecretName(view.name())) {
      sink.Error("secret-collision", "spec.output.secretName",
                 Quote(env) +
                     " is the Secret that holds the generated password; use a "
                     "different name (default <name>-pubsub-env)");
    }
  }
  if (*kind == api::kBackendRabbitmq) {
    auto url = view.rabbitmq_url_secret();
    if (url && url->name == view.env_secret_name() && !view.name().empty()) {
      sink.Error("secret-collision", "spec.output.secretName",
                 Quote(url->name) +
                     " is also spec.rabbitmq.urlSecretRef.name; the env Secret "
                     "is written by Switchboard: use a different name");
    }
  }
}

}  // namespace switchboard::rules::internal
