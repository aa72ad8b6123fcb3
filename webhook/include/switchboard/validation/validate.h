// The one rule set: webhook, `switchboard validate` and the operator all call
// these functions. Pure: no I/O, no clocks, no globals. Objects are the
// Kubernetes JSON of PubSubBackend / NatsServer (apiVersion
// pubsub.switchboard.dev/v1alpha1), as the API server or a manifest has them.
//
// CONTRACT (docs/api.md is the API): other components code against exactly
// these declarations; extend, do not change them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace switchboard::validation {

// One problem with one field. `field` is the path ("spec.nats.subjectPrefix");
// `message` says what is wrong and the fix, without repeating the path:
//   field   = "spec.nats.subjectPrefix"
//   message = "token 2 is empty in \"hatchet..prod\"; use non-empty dot-separated tokens"
// ToString() joins them: "spec.nats.subjectPrefix: token 2 is empty ...".
struct Finding {
  std::string field;
  std::string message;
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

}  // namespace switchboard::validation
