// Validate / ValidateAll: dispatch on kind, then schema, metadata, the kind's
// own rules, cross-object rules (CrossIndex) and UPDATE rules, in that order.
#include "switchboard/rules/validate.h"

#include <deque>

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

// The whole rule set for one object. `defaulted` is
// DefaultedForValidation(object, default_namespace). `cross(sink)` runs the
// cross-object rules; it is called between the object's own rules and the
// UPDATE rules, so findings keep that order.
template <typename Cross>
Report ValidateOne(const nlohmann::json& object, const nlohmann::json& defaulted,
                   const nlohmann::json* old, const std::string& default_namespace,
                   const Cross& cross) {
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
    cross(sink);
    if (old_defaulted.is_object()) internal::CheckBackendUpdate(defaulted, old_defaulted, sink);
  } else {
    internal::CheckServer(defaulted, sink);
    cross(sink);
    if (old_defaulted.is_object()) internal::CheckServerUpdate(defaulted, old_defaulted, sink);
  }
  return report;
}

// A Secret, or the facts of a PubSubBackend or NatsServer, into the index.
// The index borrows NatsServers and Secrets: `object` must outlive it.
void AddToIndex(CrossIndex& index, const nlohmann::json& object) {
  if (api::KindOf(object) == "Secret") {
    index.AddSecret(object);
  } else {
    index.Add(CrossIndex::FactsOf(object));
  }
}

// The facts of a defaulted object; on UPDATE (`old` the stored object) a
// prefix or user name it did not hold before is a claim made now (api/claims.h).
CrossIndex::Facts FactsFor(const nlohmann::json& defaulted, const nlohmann::json* old,
                           const std::string& default_namespace) {
  CrossIndex::Facts f = CrossIndex::FactsOf(defaulted);
  if (old == nullptr || !old->is_object() || !f.nats) return f;
  CrossIndex::Facts before =
      CrossIndex::FactsOf(internal::DefaultedForValidation(*old, default_namespace));
  bool moved = !before.nats || before.server != f.server;
  f.prefix_claimed_now = moved || before.prefix != f.prefix;
  f.username_claimed_now =
      moved || (before.username != f.username && before.status_username != f.username);
  return f;
}

}  // namespace

ContextIndex::ContextIndex(const Context& context) : impl_(std::make_unique<CrossIndex>()) {
  for (const auto& s : context.servers) AddToIndex(*impl_, s);
  for (const auto& b : context.backends) AddToIndex(*impl_, b);
  for (const auto& s : context.secrets) AddToIndex(*impl_, s);
  impl_->Seal();
}
ContextIndex::ContextIndex(std::unique_ptr<CrossIndex> impl) : impl_(std::move(impl)) {}
ContextIndex::~ContextIndex() = default;
ContextIndex::ContextIndex(ContextIndex&&) noexcept = default;
ContextIndex& ContextIndex::operator=(ContextIndex&&) noexcept = default;

Report Validate(const nlohmann::json& object, const ContextIndex& context, Operation op,
                const nlohmann::json* old, const std::string& default_namespace) {
  nlohmann::json defaulted = internal::DefaultedForValidation(object, default_namespace);
  const nlohmann::json* stored = op == Operation::kUpdate ? old : nullptr;
  return ValidateOne(object, defaulted, stored, default_namespace, [&](Sink& sink) {
    context.impl().Check(FactsFor(defaulted, stored, default_namespace), sink);
  });
}

Report Validate(const nlohmann::json& object, const Context& context, Operation op,
                const nlohmann::json* old, const std::string& default_namespace) {
  return Validate(object, ContextIndex(context), op, old, default_namespace);
}

Report Validate(const nlohmann::json& object, const Context& context, Operation op,
                const nlohmann::json* old) {
  return Validate(object, context, op, old, "default");
}

// Where the cross-object findings of one judged object go in its report.
struct Splice {
  size_t report;  // index into Batch::State::reports
  size_t errors_at, warnings_at;
  size_t id;  // in the index
};

struct Batch::State {
  std::string default_namespace;
  CrossIndex index;
  // NatsServers (defaulted) and Secrets given to Add: the index points into them.
  std::deque<nlohmann::json> kept;
  std::vector<Report> reports;  // one per Add, without the cross-object findings yet
  std::vector<Splice> splices;  // for those that reached the cross-object step
};

Batch::Batch(const Context& context, std::string default_namespace)
    : state_(std::make_unique<State>()) {
  state_->default_namespace = std::move(default_namespace);
  for (const auto& s : context.servers) AddToIndex(state_->index, s);
  for (const auto& b : context.backends) AddToIndex(state_->index, b);
  for (const auto& s : context.secrets) AddToIndex(state_->index, s);
}
Batch::~Batch() = default;
Batch::Batch(Batch&&) noexcept = default;
Batch& Batch::operator=(Batch&&) noexcept = default;

void Batch::Add(const nlohmann::json& object, const nlohmann::json* old) {
  State& st = *state_;
  std::string kind = api::KindOf(object);
  nlohmann::json defaulted = internal::DefaultedForValidation(object, st.default_namespace);
  const nlohmann::json* judged = &defaulted;
  size_t id = SIZE_MAX;
  if (kind == api::kKindServer) {
    // The index reads a server's allowed namespaces when checking backends.
    judged = &st.kept.emplace_back(std::move(defaulted));
    id = st.index.Add(CrossIndex::FactsOf(*judged));
  } else if (kind == api::kKindBackend) {
    id = st.index.Add(FactsFor(defaulted, old, st.default_namespace));
  } else if (kind == "Secret") {
    st.index.AddSecret(st.kept.emplace_back(object));
  }
  Splice splice{st.reports.size(), 0, 0, id};
  bool cross = false;
  st.reports.push_back(ValidateOne(object, *judged, old, st.default_namespace, [&](Sink& sink) {
    splice.errors_at = sink.errors();
    splice.warnings_at = sink.warnings();
    cross = id != SIZE_MAX;
  }));
  if (cross) st.splices.push_back(splice);
}

void Batch::AddSecret(nlohmann::json secret) {
  state_->index.AddSecret(state_->kept.emplace_back(std::move(secret)));
}

std::vector<Report> Batch::Finish() {
  State& st = *state_;
  st.index.Seal();
  auto insert = [](std::vector<Finding>& into, size_t at, std::vector<Finding>& from) {
    into.insert(into.begin() + static_cast<std::ptrdiff_t>(at),
                std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  for (const auto& s : st.splices) {
    Report cross;
    Sink sink(&cross);
    st.index.Check(s.id, sink);
    Report& report = st.reports[s.report];
    insert(report.errors, s.errors_at, cross.errors);
    insert(report.warnings, s.warnings_at, cross.warnings);
  }
  st.splices = {};
  return std::move(st.reports);
}

std::vector<Report> ValidateAll(const std::vector<nlohmann::json>& objects, const Context& context,
                                const std::string& default_namespace,
                                const std::vector<const nlohmann::json*>& olds) {
  Batch batch(context, default_namespace);
  for (size_t i = 0; i < objects.size(); ++i) {
    batch.Add(objects[i], i < olds.size() ? olds[i] : nullptr);
  }
  return batch.Finish();
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
