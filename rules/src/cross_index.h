// Private: what cross-object rules need from the other objects, indexed so
// one lookup answers "who else on this server uses this prefix?". Built from
// views (defaults applied on read), holding pointers into the objects, which
// must outlive the index. Objects are identified by namespace/name; the
// object under validation is never compared with an entry of its own key.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "sink.h"
#include "switchboard/api/views.h"

namespace switchboard::rules::internal {

class CrossIndex {
 public:
  // Room for about n objects (avoids rehashing while a big input is added).
  void Reserve(size_t n);
  void AddBackend(const nlohmann::json& object);
  void AddServer(const nlohmann::json& object);
  void AddSecret(const nlohmann::json& object);

  // Rules for a (defaulted, namespaced) object against the indexed others.
  void CheckBackend(const nlohmann::json& backend, Sink& sink) const;
  void CheckServer(const nlohmann::json& server, Sink& sink) const;

 private:
  struct Owner {
    std::string_view kind;  // PubSubBackend | NatsServer
    api::ObjectKey key;
  };
  struct NatsEntry {
    size_t owner;
    std::string server;  // "ns/name"
    std::string prefix;
    std::string username;
  };
  struct Claim {
    size_t owner;            // index into owners_; SIZE_MAX for the object under validation
    std::string_view role;   // static text
    std::string_view field;  // static text
    bool writes;
  };

  static std::vector<Claim> ClaimsOf(const nlohmann::json& object, size_t owner);
  static std::string SecretKey(std::string_view ns, std::string_view name) {
    return std::string(ns) + "/" + std::string(name);
  }
  std::string Describe(size_t owner) const;
  void CheckClaims(const nlohmann::json& object, const api::ObjectKey& self, Sink& sink) const;

  std::vector<Owner> owners_;
  std::vector<NatsEntry> nats_;
  std::unordered_map<std::string, const nlohmann::json*> servers_;    // "ns/name"
  std::unordered_map<std::string, std::vector<size_t>> by_prefix_;    // server|prefix
  std::unordered_map<std::string, std::vector<size_t>> by_ancestor_;  // server|ancestor
  std::unordered_map<std::string, std::vector<size_t>> by_username_;  // server|user
  std::unordered_map<std::string, std::vector<size_t>> by_server_;    // server
  std::unordered_map<std::string, std::vector<Claim>> claims_;        // ns/secret
  std::unordered_map<std::string, const nlohmann::json*> secrets_;    // ns/secret
  friend void CheckKnownSecrets(const CrossIndex&, const nlohmann::json&, Sink&);
};

}  // namespace switchboard::rules::internal
