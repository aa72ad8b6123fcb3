// An owned Secret as the operator's cache keeps it: the members a reconcile
// or an event handler reads (OwnedSecretFields, cache_shapes.h), as typed
// strings and flat sorted vectors rather than a JSON DOM. A DOM spends a
// map node, a heap string and often a second heap block on every member;
// the record holds the same text in about half the heap, and the operator
// caches two owned Secrets per installation. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::operator_controller {

struct SecretRecord {
  // Key-value pairs sorted by key (as the API's maps are).
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  struct Owner {
    std::string kind;
    std::string name;
    std::string uid;
    bool operator==(const Owner&) const = default;
  };

  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string deletion_timestamp;  // empty when not being deleted
  Pairs labels;
  Pairs annotations;
  std::vector<Owner> owners;  // metadata.ownerReferences, in order
  Pairs data;                 // base64, as the API sends it

  bool operator==(const SecretRecord&) const = default;
};

// The record of `secret` (an API object, whole or masked). A member of the
// wrong JSON type is left out, as if absent: the API never sends one, and a
// reader treats a missing member as empty already.
SecretRecord SecretRecordOf(const nlohmann::json& secret);

// The record as the API shows those members: metadata.{name, namespace,
// uid, resourceVersion, deletionTimestamp, labels, annotations,
// ownerReferences[{kind, name, uid}]} and data; empty ones left out, as the
// API leaves them out. What a reader of the cache gets (SecretCache::Get).
nlohmann::json ObjectOf(const SecretRecord& record);

}  // namespace switchboard::operator_controller
