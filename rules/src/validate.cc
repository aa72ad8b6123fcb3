// Validate / ValidateAll: dispatch on kind, then schema, metadata, the kind's
// own rules, cross-object rules (CrossIndex) and UPDATE rules, in that order.
#include "switchboard/rules/validate.h"

#include "cross_index.h"
#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/views.h"

namespace switchboard::rules {
namespace {

using internal::CrossIndex;
using internal::Sink;

std::string_view GroupOf(std::string_view api_version) {
  size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

void AddToIndex(CrossIndex& index, const nlohmann::json& object) {
  std::string kind = api::KindOf(object);
  if (kind == api::kKindBackend)
    index.AddBackend(object);
  else if (kind == api::kKindServer)
    index.AddServer(object);
  else if (kind == "Secret")
    index.AddSecret(object);
}

// The whole rule set for one object. `defaulted` is
// DefaultedForValidation(object, default_namespace).
Report ValidateOne(const nlohmann::json& object, const nlohmann::json& defaulted,
                   const CrossIndex& index, const nlohmann::json* old,
                   const std::string& default_namespace) {
  Report report;
  Sink sink(&report);
  if (!object.is_object()) {
    sink.Error("type", "",
               "expected a Kubernetes object (a mapping), not " + internal::TypeName(object));
    return report;
  }
  auto kind = api::String(api::Field(object, "kind"));
  if (!kind) {
    sink.Error("kind", "kind", "required; set kind: PubSubBackend or NatsServer");
    return report;
  }
  bool backend = *kind == api::kKindBackend;
  if (!backend && *kind != api::kKindServer) {
    std::string hint;
    std::string lower(*kind);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "pubsubbackend") hint = " (did you mean PubSubBackend?)";
    if (lower == "natsserver") hint = " (did you mean NatsServer?)";
    sink.Error("kind", "kind",
               internal::Quote(*kind) + " is not a kind of " + std::string(api::kGroup) + hint +
                   "; use PubSubBackend or NatsServer");
    return report;
  }
  bool spec_ok = internal::CheckSchema(object, sink);
  internal::CheckMetadata(object, sink);
  if (!spec_ok) return report;
  nlohmann::json old_defaulted;
  if (old != nullptr && old->is_object()) {
    old_defaulted = internal::DefaultedForValidation(*old, default_namespace);
  }
  if (backend) {
    internal::CheckBackend(defaulted, object, sink);
    index.CheckBackend(defaulted, sink);
    if (old_defaulted.is_object()) internal::CheckBackendUpdate(defaulted, old_defaulted, sink);
  } else {
    internal::CheckServer(defaulted, sink);
    index.CheckServer(defaulted, sink);
    if (old_defaulted.is_object()) internal::CheckServerUpdate(defaulted, old_defaulted, sink);
  }
  return report;
}

}  // namespace

ContextIndex::ContextIndex(const Context& context) : impl_(std::make_unique<CrossIndex>()) {
  for (const auto& s : context.servers) AddToIndex(*impl_, s);
  for (const auto& b : context.backends) AddToIndex(*impl_, b);
  for (const auto& s : context.secrets) AddToIndex(*impl_, s);
}
ContextIndex::~ContextIndex() = default;
ContextIndex::ContextIndex(ContextIndex&&) noexcept = default;
ContextIndex& ContextIndex::operator=(ContextIndex&&) noexcept = default;

Report Validate(const nlohmann::json& object, const ContextIndex& context, Operation op,
                const nlohmann::json* old, const std::string& default_namespace) {
  nlohmann::json defaulted = internal::DefaultedForValidation(object, default_namespace);
  return ValidateOne(object, defaulted, context.impl(), op == Operation::kUpdate ? old : nullptr,
                     default_namespace);
}

Report Validate(const nlohmann::json& object, const Context& context, Operation op,
                const nlohmann::json* old, const std::string& default_namespace) {
  return Validate(object, ContextIndex(context), op, old, default_namespace);
}

Report Validate(const nlohmann::json& object, const Context& context, Operation op,
                const nlohmann::json* old) {
  return Validate(object, context, op, old, "default");
}

std::vector<Report> ValidateAll(const std::vector<nlohmann::json>& objects, const Context& context,
                                const std::string& default_namespace,
                                const std::vector<const nlohmann::json*>& olds) {
  // The index keeps pointers into NatsServers (their allowed namespaces are
  // read while checking backends) and Secrets, but copies what it needs
  // from PubSubBackends. So a backend's defaulted copy is made for the index,
  // dropped, and made again when the backend is judged; holding one for
  // every object would double the memory of a large input.
  std::vector<nlohmann::json> defaulted_servers;  // and any other kind the index points into
  std::vector<size_t> server_slot(objects.size(), SIZE_MAX);
  for (size_t i = 0; i < objects.size(); ++i) {
    if (api::KindOf(objects[i]) != api::kKindBackend) {
      server_slot[i] = defaulted_servers.size();
      defaulted_servers.push_back(internal::DefaultedForValidation(objects[i], default_namespace));
    }
  }
  CrossIndex index;
  index.Reserve(objects.size() + context.backends.size() + context.servers.size());
  for (const auto& s : context.servers) AddToIndex(index, s);
  for (const auto& b : context.backends) AddToIndex(index, b);
  for (const auto& s : context.secrets) AddToIndex(index, s);
  for (size_t i = 0; i < objects.size(); ++i) {
    if (server_slot[i] != SIZE_MAX) {
      AddToIndex(index, defaulted_servers[server_slot[i]]);
    } else if (!api::NamespaceOf(objects[i]).empty()) {
      // The index reads backends through views, which apply the same
      // defaults on read; only a missing namespace needs the copy.
      AddToIndex(index, objects[i]);
    } else {
      AddToIndex(index, internal::DefaultedForValidation(objects[i], default_namespace));
    }
  }
  std::vector<Report> reports;
  reports.reserve(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    const nlohmann::json* old = i < olds.size() ? olds[i] : nullptr;
    if (server_slot[i] != SIZE_MAX) {
      reports.push_back(ValidateOne(objects[i], defaulted_servers[server_slot[i]], index, old,
                                    default_namespace));
    } else {
      reports.push_back(ValidateOne(objects[i],
                                    internal::DefaultedForValidation(objects[i], default_namespace),
                                    index, old, default_namespace));
    }
  }
  return reports;
}

bool IsSwitchboardObject(const nlohmann::json& object) {
  if (!object.is_object()) return false;
  auto api_version = api::String(api::Field(object, "apiVersion"));
  std::string_view group = api_version ? GroupOf(*api_version) : std::string_view();
  if (group == api::kGroup) return true;
  std::string kind = api::KindOf(object);
  bool ours = kind == api::kKindBackend || kind == api::kKindServer;
  return ours && (!api_version || group.empty());
}

}  // namespace switchboard::rules
