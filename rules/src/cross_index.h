// Private: what cross-object rules need from the other objects, indexed so
// one lookup answers "who else on this server uses this prefix?". Each
// object is read once (views: defaults applied on read) into small Facts,
// which the index shares (immutable: a copy of the index shares them too);
// only NatsServers (and Secrets) are borrowed whole, and those must outlive
// the index. Objects are identified by namespace/name; the object under
// validation is never compared with an entry of its own key.
//
// An index is copyable in O(N) pointer and integer copies, and a copy can
// take one object out (Remove) and put others in (Add, Seal): that is how
// rules::ContextCache makes the next snapshot after one backend changed
// without reading every object again.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sink.h"
#include "switchboard/api/claims.h"
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
    kCallout,
    kUsageSystem,
    kCa
  };
  struct Claim {
    ClaimKind kind;
    std::string secret;  // the Secret's name, in the object's namespace
    bool operator==(const Claim&) const = default;
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
    // spec.nats.limits: the values that parse, and whether any is written.
    api::InstallationLimits limits;
    bool limits_set = false;
    // metadata.creationTimestamp (api::ClaimAge): who keeps a prefix or user
    // name two backends claim.
    std::optional<int64_t> created;
    // Claimed by the UPDATE under review (changed from the stored object):
    // judged as a claim not stored yet, whatever `created` says.
    bool prefix_claimed_now = false, username_claimed_now = false;
    // NatsServer: the object itself, borrowed (its allowed namespaces are read).
    const nlohmann::json* object = nullptr;
    // Whether the rules would read the same of both (rules::ContextCache
    // rebuilds an index only when not).
    bool operator==(const Facts&) const = default;
  };
  static Facts FactsOf(const nlohmann::json& object);

  // Room for about n objects (avoids regrowing while a big input is added).
  void Reserve(size_t n);
  using FactsPtr = std::shared_ptr<const Facts>;
  // Indexes a PubSubBackend or NatsServer (other kinds get an id and no
  // entry); returns its id for Check(). A NatsServer's `object` must
  // outlive the index.
  size_t Add(Facts facts);
  size_t Add(FactsPtr facts);
  // Takes the object indexed under `id` out: no rule sees it any more, and
  // its id is never reused (FactsAt(id) is then an empty Facts). Its index
  // entries go in the next Seal(), one pass for any number of removals:
  // call Seal() before the next Check().
  void Remove(size_t id);
  // Ids given out (removed ones included) and ids removed: a caller that
  // keeps removing compacts by building a new index when removed() grows
  // past the live count.
  size_t ids() const { return facts_.size(); }
  size_t removed() const { return removed_; }
  void AddSecret(const nlohmann::json& object);
  // Makes the index ready for Check(); call after the last Add (again after
  // adding more).
  void Seal();

  // Rules for a (defaulted, namespaced) object against the indexed others.
  void Check(const Facts& facts, Sink& sink) const;
  void Check(size_t id, Sink& sink) const { Check(FactsAt(id), sink); }
  // The facts indexed under an id Add() returned (rules::ContextCache
  // compares an object's new facts with them).
  const Facts& FactsAt(size_t id) const { return facts_[id] ? *facts_[id] : kNoFacts; }
  const FactsPtr& SharedFactsAt(size_t id) const { return facts_[id]; }

 private:
  // Ids of facts_ by the hash of a key, as one sorted vector: 16 bytes an
  // entry, where a hash map of vectors costs over a hundred per key, and
  // most keys (a prefix, a username) belong to one object. Hashes may
  // collide, so every caller checks the facts of an id against its key.
  class Multimap {
   public:
    void Reserve(size_t n) { entries_.reserve(n); }
    void Add(uint64_t hash, size_t id, uint32_t extra = 0) {
      entries_.push_back({hash, static_cast<uint32_t>(id), extra});
    }
    // Sorts what was added since the last Seal into place (a sort of the
    // new entries and one merge: O(N) after a few Adds, not O(N log N)).
    void Seal();
    // Drops every entry whose id `gone(id)` says; the rest stay in order.
    template <typename F>
    void RemoveIf(const F& gone) {
      std::erase_if(entries_, [&](const Entry& e) { return gone(e.id); });
    }
    // f(id, extra) for each entry with this hash, in the order added.
    template <typename F>
    void ForEach(uint64_t hash, const F& f) const {
      auto it = std::lower_bound(entries_.begin(), entries_.end(), Entry{hash, 0, 0});
      for (; it != entries_.end() && it->hash == hash; ++it) f(it->id, it->extra);
    }

   private:
    struct Entry {
      uint64_t hash;
      uint32_t id;
      uint32_t extra;
      auto operator<=>(const Entry&) const = default;
    };
    std::vector<Entry> entries_;
  };
  static uint64_t Hash(std::string_view a, std::string_view b = {});
  static std::string SecretKey(std::string_view ns, std::string_view name) {
    return std::string(ns) + "/" + std::string(name);
  }
  std::string Describe(size_t id) const;
  // Of `ids` (other claimants of what `facts` claims), the one that keeps
  // it, when that is not `facts`; SIZE_MAX when `facts` keeps it.
  size_t Winner(const Facts& facts, const std::vector<size_t>& ids, bool prefix) const;
  // How old the claim of `f` on its prefix (or user name) is.
  static api::ClaimAge AgeOf(const Facts& f, bool prefix);
  void CheckClaims(const Facts& facts, Sink& sink) const;
  void CheckBackend(const Facts& facts, Sink& sink) const;
  void CheckServer(const Facts& facts, Sink& sink) const;
  // A backend's spec.nats.limits against the server it is bound to.
  static void CheckLimits(const Facts& facts, const api::NatsServerView& server, Sink& sink);

  static const Facts kNoFacts;

  std::vector<FactsPtr> facts_;  // by id; null once removed
  size_t removed_ = 0;
  bool unsealed_removals_ = false;  // multimap entries of removed ids remain
  std::unordered_map<std::string, const nlohmann::json*> servers_;  // "ns/name"
  Multimap by_prefix_;                                              // server, prefix
  Multimap by_ancestor_;  // server, proper ancestor of the prefix (extra: its length)
  Multimap by_username_;  // server, user (extra: 1 for status.username)
  Multimap by_server_;    // server
  Multimap claims_;       // namespace, Secret (extra: index into the facts' claims)
  std::unordered_map<std::string, const nlohmann::json*> secrets_;  // "ns/secret"
};

}  // namespace switchboard::rules::internal
