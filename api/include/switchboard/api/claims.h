// Who keeps a subject prefix or a NATS user name that two PubSubBackends on
// one NatsServer both claim. One decision for the rules (so the webhook,
// `switchboard validate` and the operator's status agree) and the
// operator's render (so the file holds the backend the rules accept):
//
//   - the older claim keeps it: metadata.creationTimestamp, earlier first;
//   - an object without a (readable) creationTimestamp is not stored yet,
//     a manifest or the object of a CREATE review, and so newer than every
//     stored one: it is the one refused;
//   - equal ages (the API server's timestamps have whole seconds, so two
//     backends created in the same second) go to the smaller
//     namespace/name, which every component sees the same.
//
// A claim made by an UPDATE (the prefix or user name changed) is judged as
// one not stored yet: a change never takes a name from a running backend
// (rules::Validate with Operation::kUpdate).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "switchboard/api/views.h"

namespace switchboard::api {

struct ClaimAge {
  std::optional<int64_t> created;  // Unix seconds; nullopt: not stored yet
  ObjectKey key;
};

ClaimAge ClaimAgeOf(const nlohmann::json& object);

// metadata.creationTimestamp in Unix seconds; nullopt when absent or not
// RFC 3339.
std::optional<int64_t> CreationTimeOf(const nlohmann::json& object);

// True when `a` keeps what `a` and `b` both claim (see above). A strict
// order: exactly one of KeepsClaim(a, b), KeepsClaim(b, a) holds for
// different keys.
bool KeepsClaim(const ClaimAge& a, const ClaimAge& b);

}  // namespace switchboard::api
