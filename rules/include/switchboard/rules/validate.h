// The one rule set: webhook, `switchboard validate` and the operator all call
// these functions. Pure: no I/O, no clocks, no globals. Objects are the
// Kubernetes JSON of PubSubBackend / NatsServer (apiVersion
// pubsub.switchboard.dev/v1alpha1), as the API server or a manifest has them.
//
// CONTRACT (docs/api.md is the API): other components code against exactly
// these declarations; extend, do not change them.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace switchboard::rules {
namespace internal {
class CrossIndex;
}

// One problem with one field. `field` is the path ("spec.nats.subjectPrefix");
// `message` says what is wrong and the fix, without repeating the path:
//   field   = "spec.nats.subjectPrefix"
//   message = "token 2 is empty in \"hatchet..prod\"; use non-empty dot-separated tokens"
// ToString() joins them: "spec.nats.subjectPrefix: token 2 is empty ...".
struct Finding {
  std::string field;
  std::string message;
  // Extension: a stable rule id ("subject-prefix", "unique-prefix", ...;
  // listed in rules/README.md) for SARIF/JUnit output and filtering.
  std::string rule = {};
  std::string ToString() const { return field.empty() ? message : field + ": " + message; }
};

struct Report {
  std::vector<Finding> errors;    // reject
  std::vector<Finding> warnings;  // admit, but tell the user
  bool ok() const { return errors.empty(); }
};

// What cross-object rules see: the other objects that already exist (from a
// watch-backed cache in the webhook and operator; from the other documents
// given to `switchboard validate`). The object under validation may appear
// in these lists (same namespace/name); it is then ignored, never compared
// with itself.
struct Context {
  std::vector<nlohmann::json> backends;  // PubSubBackend objects
  std::vector<nlohmann::json> servers;   // NatsServer objects
  // Extension, optional: Secret objects that are known (the CLI's inputs). A
  // referenced Secret found here is checked (key present, rabbitmq URL
  // scheme); one not found is never an error. Values are never echoed.
  std::vector<nlohmann::json> secrets = {};
};

enum class Operation { kCreate, kUpdate };

// Validates one object of either kind (dispatching on "kind"); `old` is the
// stored object on UPDATE, null on CREATE. Unknown kinds give an error naming
// "kind". Defaults are applied (DefaultedCopy) before the rules run, so a
// manifest without defaults is judged as the API server would store it.
Report Validate(const nlohmann::json& object, const Context& context,
                Operation op = Operation::kCreate, const nlohmann::json* old = nullptr);

// The object with every schema default filled in (what the mutating webhook
// produces). Never fails: fields it cannot make sense of are left as they are
// for Validate to report.
nlohmann::json DefaultedCopy(const nlohmann::json& object);

// RFC 6902 JSON Patch turning `object` into DefaultedCopy(object); an empty
// array when nothing is missing.
nlohmann::json DefaultingPatch(const nlohmann::json& object);

// ---- Extensions -----------------------------------------------------------

// Objects are namespaced: an object without metadata.namespace is judged as
// if it had `default_namespace` (the webhook passes AdmissionRequest.namespace,
// the CLI its --namespace flag). Validate() above uses "default".
Report Validate(const nlohmann::json& object, const Context& context, Operation op,
                const nlohmann::json* old, const std::string& default_namespace);

// Many objects at once (the CLI, an operator resync): report i is what
// Validate(objects[i], C, kCreate) would say, where C is `context` plus every
// other object of `objects`; cross-object rules use an index, so the whole
// call is O(n log n), not O(n^2). `olds`, when not empty, has one entry per
// object: the stored version (UPDATE) or nullptr (CREATE).
std::vector<Report> ValidateAll(const std::vector<nlohmann::json>& objects,
                                const Context& context = {},
                                const std::string& default_namespace = "default",
                                const std::vector<const nlohmann::json*>& olds = {});

// ValidateAll for callers that cannot hold every object at once (the CLI on
// large inputs): Add() judges what an object decides alone and keeps only
// what the cross-object rules need of it (names, server, prefix, username,
// claimed Secrets; a NatsServer whole), so the object may be freed right
// after; Finish() runs the cross-object rules. Finish()[i] is what
// ValidateAll(objects, context, default_namespace, olds)[i] says, for the
// objects given to Add() in order.
class Batch {
 public:
  // Borrows the context's objects: they must outlive the batch, unchanged.
  Batch(const Context& context, std::string default_namespace);
  ~Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;

  // `old`: the stored version (judged as UPDATE) or nullptr; borrowed until
  // Add returns.
  void Add(const nlohmann::json& object, const nlohmann::json* old = nullptr);
  // A Secret that is not judged but known, as in Context::secrets (kept).
  void AddSecret(nlohmann::json secret);
  // One report per Add(), in order. Call once.
  std::vector<Report> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A Context indexed once, for callers that judge many objects against the
// same context: Validate() with a ContextIndex does no per-call work
// proportional to the context size. Callers that watch the cluster (the
// webhook, the operator) get theirs from rules::ContextCache
// (context_cache.h), one per change of what the rules read.
// Borrows the context's objects: they must outlive the index, unchanged.
class ContextIndex {
 public:
  explicit ContextIndex(const Context& context);
  // An index built elsewhere (rules::ContextCache).
  explicit ContextIndex(std::unique_ptr<internal::CrossIndex> impl);
  ~ContextIndex();
  ContextIndex(ContextIndex&&) noexcept;
  ContextIndex& operator=(ContextIndex&&) noexcept;
  const internal::CrossIndex& impl() const { return *impl_; }

 private:
  std::unique_ptr<internal::CrossIndex> impl_;
};

Report Validate(const nlohmann::json& object, const ContextIndex& context, Operation op,
                const nlohmann::json* old, const std::string& default_namespace);

// DefaultedCopy / DefaultingPatch for an object without metadata.namespace
// that will live in `default_namespace` (AdmissionRequest.namespace): the
// namespace-derived defaults (serverRef.namespace, username) use it. The
// one-argument forms leave those defaults unset when the namespace is absent.
nlohmann::json DefaultedCopy(const nlohmann::json& object, const std::string& default_namespace);
nlohmann::json DefaultingPatch(const nlohmann::json& object, const std::string& default_namespace);

// Whether Validate() judges this object: kind PubSubBackend or NatsServer
// (with our apiVersion group or none), or any kind in our group (an unknown
// kind there is an error). Other objects are not Switchboard's.
bool IsSwitchboardObject(const nlohmann::json& object);

}  // namespace switchboard::rules
