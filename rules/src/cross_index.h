// Private: what cross-object rules need from the other objects, indexed so
// one lookup answers "who else on this server uses this prefix?". Each
// object is read once (views: defaults applied on read) into small Facts,
// which the index owns; only NatsServers (and Secrets) are borrowed whole,
// and those must outlive the index. Objects are identified by
// namespace/name; the object under validation is never compared with an
// entry of its own key.
#pragma once

#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sink.h"
#include "switchboard/api/views.h"

namespace switchboard::rules::internal {

class CrossIndex {
 public:
  // A Secret an object makes Switchboard write (or read): its kind says which
  // field names it and what the Secret is to the object.
  enum class ClaimKind : uint8_t {
    kEnv,
    kPassword,
    kGeneratedCredentials,
    kRabbitmqUrl,
    kConfig,
    kCa
  };
  struct Claim {
    ClaimKind kind;
    std::string secret;  // the Secret's name, in the object's namespace
  };

  // What the cross-object rules read of one PubSubBackend or NatsServer.
  // Kept instead of the object when many are judged at once: a few hundred
  // bytes, where the parsed object is several kilobytes.
  struct Facts {
    std::string_view kind;  // api::kKindBackend or api::kKindServer; empty for others
    api::ObjectKey key;
    std::vector<Claim> claims;
    // PubSubBackend
    std::string backend_kind;  // spec.kind
    std::optional<api::SecretKeyRef> rabbitmq_url, password;
    bool nats = false;          // spec.kind nats with a spec.nats block
    bool server_named = false;  // spec.nats.serverRef.name given
    std::string server;         // "ns/name" of the serverRef
    std::string prefix, username;
    std::string status_username;  // during a rotation: the current user, <username>-r<N>
    // NatsServer: the object itself, borrowed (its allowed namespaces are read).
    const nlohmann::json* object = nullptr;
  };
  static Facts FactsOf(const nlohmann::json& object);

  // Room for about n objects (avoids rehashing while a big input is added).
  void Reserve(size_t n);
  // Indexes a PubSubBackend or NatsServer (other kinds are ignored); returns
  // its id for Check(). A NatsServer's `object` must outlive the index.
  size_t Add(Facts facts);
  void AddSecret(const nlohmann::json& object);

  // Rules for a (defaulted, namespaced) object against the indexed others.
  void Check(const Facts& facts, Sink& sink) const;
  void Check(size_t id, Sink& sink) const { Check(facts_[id], sink); }

 private:
  // Two names as one key (server and prefix, namespace and Secret), viewing
  // strings the index owns in facts_ (a deque: they never move).
  struct Pair {
    std::string_view a, b;
    bool operator==(const Pair&) const = default;
  };
  struct PairHash {
    size_t operator()(const Pair& p) const {
      return std::hash<std::string_view>()(p.a) * 31 + std::hash<std::string_view>()(p.b);
    }
  };
  using Ids = std::vector<size_t>;  // into facts_, in the order added
  static std::string SecretKey(std::string_view ns, std::string_view name) {
    return std::string(ns) + "/" + std::string(name);
  }
  std::string Describe(size_t id) const;
  void CheckClaims(const Facts& facts, Sink& sink) const;
  void CheckBackend(const Facts& facts, Sink& sink) const;
  void CheckServer(const Facts& facts, Sink& sink) const;

  std::deque<Facts> facts_;
  std::unordered_map<std::string, const nlohmann::json*> servers_;  // "ns/name"
  std::unordered_map<Pair, Ids, PairHash> by_prefix_;               // server, prefix
  std::unordered_map<Pair, Ids, PairHash> by_ancestor_;             // server, ancestor
  std::unordered_map<Pair, Ids, PairHash> by_username_;             // server, user
  std::unordered_map<std::string_view, Ids> by_server_;             // server
  struct ClaimRef {
    size_t id;
    size_t claim;  // into facts_[id].claims
  };
  std::unordered_map<Pair, std::vector<ClaimRef>, PairHash> claims_;  // ns, secret
  std::unordered_map<std::string, const nlohmann::json*> secrets_;    // "ns/secret"
};

}  // namespace switchboard::rules::internal
