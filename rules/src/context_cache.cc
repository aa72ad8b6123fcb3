// ContextSnapshot and ContextCache: the CrossIndex over what a watched cache
// holds, rebuilt only when what the rules read of it changed. The facts of
// each object live once, in the current index; the cache keeps per object
// only its version and where its facts are.
#include "switchboard/rules/context_cache.h"

#include <algorithm>

#include "cross_index.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/metadata.h"

namespace switchboard::rules {

using internal::CrossIndex;

namespace {

// What is indexed of one object in a build.
struct Item {
  int group = 1;             // servers 0, backends 1, Secrets 2: ContextIndex(Context)'s order
  ObjectPtr object;          // servers and Secrets
  CrossIndex::FactsPtr old;  // facts shared with the current index
  CrossIndex::Facts facts;   // facts read now (when `old` is null)
};

}  // namespace

ContextSnapshot::ContextSnapshot(const Context& context)
    : ContextSnapshot([&] {
        std::vector<ObjectPtr> kept;
        auto index = std::make_unique<CrossIndex>();
        index->Reserve(context.servers.size() + context.backends.size());
        for (const auto* list : {&context.servers, &context.backends}) {
          for (const auto& o : *list) {
            auto copy = std::make_shared<const nlohmann::json>(o);
            CrossIndex::Facts f = CrossIndex::FactsOf(*copy);
            if (f.object != nullptr) kept.push_back(copy);
            index->Add(std::move(f));
          }
        }
        for (const auto& s : context.secrets) {
          kept.push_back(std::make_shared<const nlohmann::json>(s));
          index->AddSecret(*kept.back());
        }
        index->Seal();
        return std::make_pair(std::move(kept), std::move(index));
      }()) {}

ContextSnapshot::ContextSnapshot(
    std::pair<std::vector<ObjectPtr>, std::unique_ptr<internal::CrossIndex>> built)
    : kept_(std::move(built.first)), index_(std::move(built.second)) {}
ContextSnapshot::~ContextSnapshot() = default;

// Backend changes recorded by Observe() and not yet indexed: the last
// facts of each (null: deleted) and the resourceVersion they were read from.
struct ContextCache::Changes {
  struct Change {
    CrossIndex::FactsPtr facts;
    std::string version;
    uint64_t seq = 0;  // when it was observed (ContextCache::observed_)
  };
  std::unordered_map<std::string, Change> by_id;  // kind/namespace/name
};

ContextCache::ContextCache(List list, Shape shape)
    : list_(std::move(list)), shape_(std::move(shape)), changes_(std::make_unique<Changes>()) {}
ContextCache::~ContextCache() = default;

namespace {

// Equal but for status and metadata.resourceVersion: what the rules read
// of a NatsServer (all of it but its status, which they never read).
bool SameButStatus(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object() || !b.is_object()) return a == b;
  auto strip = [](const nlohmann::json& o) {
    nlohmann::json c = o;
    c.erase("status");
    if (auto m = c.find("metadata"); m != c.end() && m->is_object()) m->erase("resourceVersion");
    return c;
  };
  return strip(a) == strip(b);
}

}  // namespace

namespace {

std::string IdOf(std::string_view kind, const nlohmann::json& object) {
  return std::string(kind) + "/" + api::NamespaceOf(object) + "/" + api::NameOf(object);
}

}  // namespace

void ContextCache::Observe(const nlohmann::json* before, const nlohmann::json* after) {
  if (before == nullptr && after == nullptr) return;
  if (before != nullptr && after != nullptr && api::KindOf(*before) != api::KindOf(*after)) {
    Invalidate();
    return;
  }
  const nlohmann::json& object = after ? *after : *before;
  const std::string kind = api::KindOf(object);
  if (kind == api::kKindServer) {
    // A server's facts borrow the whole object: any change but its status
    // (its installations count, written on every burst of backends).
    if (before == nullptr || after == nullptr || !SameButStatus(*before, *after)) Invalidate();
    return;
  }
  if (kind != api::kKindBackend) {
    Invalidate();
    return;
  }
  // A backend's facts are copies of a few fields: compare those, and carry
  // the new ones to the next snapshot.
  auto facts = [this](const nlohmann::json& o) {
    return shape_ ? CrossIndex::FactsOf(shape_(o)) : CrossIndex::FactsOf(o);
  };
  CrossIndex::FactsPtr next;
  if (after != nullptr) {
    next = std::make_shared<const CrossIndex::Facts>(facts(*after));
    if (before != nullptr && facts(*before) == *next) return;
  }
  Changes::Change change{std::move(next), after ? api::ResourceVersionOf(*after) : ""};
  std::string id = IdOf(kind, object);
  std::lock_guard lock(changes_mu_);
  change.seq = ++observed_;
  changes_->by_id.insert_or_assign(std::move(id), std::move(change));
}

uint64_t ContextCache::builds() const {
  std::lock_guard lock(mu_);
  return builds_;
}

uint64_t ContextCache::listings() const {
  std::lock_guard lock(mu_);
  return listings_;
}

std::unique_ptr<ContextCache::Changes> ContextCache::TakeChanges() {
  auto empty = std::make_unique<Changes>();
  std::lock_guard lock(changes_mu_);
  std::swap(empty, changes_);
  return empty;
}

std::shared_ptr<const ContextSnapshot> ContextCache::Snapshot() {
  // Read before listing: an event during the listing bumps it again, and
  // the next call lists once more.
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  std::lock_guard lock(mu_);
  if (snapshot_ && generation == built_generation_) {
    std::unique_ptr<Changes> changes = TakeChanges();
    if (changes->by_id.empty()) return snapshot_;
    if (auto next = Apply(*changes)) return next;
    // The changes taken are in the cache the listing reads.
    return Relist(generation, /*compact=*/true);
  }
  return Relist(generation, /*compact=*/false);
}

std::shared_ptr<const ContextSnapshot> ContextCache::Apply(const Changes& changes) {
  const CrossIndex& current = snapshot_->index().impl();
  // Each change leaves a removed id behind: past about as many as there are
  // objects, a listing builds a compact index instead (O(N) once per ~N
  // changes).
  if (current.removed() + changes.by_id.size() > entries_.size() + 64) return nullptr;
  auto index = std::make_unique<CrossIndex>(current);
  for (const auto& [id, change] : changes.by_id) {
    auto it = entries_.find(id);
    if (it != entries_.end()) index->Remove(it->second.id);
    if (change.facts) {
      Entry e;
      e.version = change.version;
      e.id = index->Add(change.facts);
      entries_.insert_or_assign(id, std::move(e));
    } else if (it != entries_.end()) {
      entries_.erase(it);
    }
  }
  index->Seal();
  std::vector<ObjectPtr> kept = snapshot_->kept_;
  snapshot_ =
      std::make_shared<const ContextSnapshot>(std::make_pair(std::move(kept), std::move(index)));
  ++builds_;
  return snapshot_;
}

std::shared_ptr<const ContextSnapshot> ContextCache::Relist(uint64_t generation, bool compact) {
  ++listings_;
  const CrossIndex* current = snapshot_ ? &snapshot_->index().impl() : nullptr;
  // A change observed before the listing starts is in what it reads (a
  // cache calls Observe after it holds the change), or an older version of
  // what it reads: drop those. One observed during the listing stays, to be
  // applied next time (the same facts again, or newer ones).
  uint64_t listed_after;
  {
    std::lock_guard lock(changes_mu_);
    listed_after = observed_;
  }
  std::vector<ObjectPtr> objects = list_();
  {
    std::lock_guard lock(changes_mu_);
    std::erase_if(changes_->by_id,
                  [listed_after](const auto& c) { return c.second.seq <= listed_after; });
  }
  std::unordered_map<std::string, Entry> next;
  next.reserve(objects.size());
  std::vector<std::pair<std::string, Item>> items;
  items.reserve(objects.size());
  bool changed = !snapshot_ || compact;
  for (auto& o : objects) {
    if (!o) continue;
    const std::string kind = api::KindOf(*o);
    const bool secret = kind == "Secret";
    if (!secret && kind != api::kKindBackend && kind != api::kKindServer) continue;
    std::string id = IdOf(kind, *o);
    Entry e;
    e.version = api::ResourceVersionOf(*o);
    e.secret = secret;
    Item item;
    auto it = entries_.find(id);
    const bool known = it != entries_.end() && current && it->second.secret == secret;
    if (known && !e.version.empty() && it->second.version == e.version) {
      item.object = it->second.object;
      if (!secret) item.old = current->SharedFactsAt(it->second.id);
    } else {
      if (shape_) o = std::make_shared<const nlohmann::json>(shape_(*o));
      if (secret) {
        item.object = o;
        changed = true;
      } else {
        item.facts = CrossIndex::FactsOf(*o);
        // A NatsServer's facts point into the object: keep it (a backend's
        // facts are copies, and the object may go).
        if (item.facts.object != nullptr) item.object = o;
        if (!known || !(current->FactsAt(it->second.id) == item.facts)) changed = true;
      }
    }
    item.group = secret ? 2 : (kind == api::kKindServer ? 0 : 1);
    e.object = item.object;
    next.emplace(id, std::move(e));
    items.emplace_back(std::move(id), std::move(item));
  }
  if (next.size() != entries_.size()) changed = true;  // some object went
  built_generation_ = generation;
  if (!changed) {
    // Nothing the rules read changed: the current index stays, and each
    // object's facts are where they were.
    for (auto& [id, e] : next) e.id = entries_.at(id).id;
    entries_ = std::move(next);
    return snapshot_;
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.second.group < b.second.group; });
  std::vector<ObjectPtr> kept;
  auto index = std::make_unique<CrossIndex>();
  index->Reserve(items.size());
  for (auto& [id, item] : items) {
    Entry& e = next.at(id);
    if (item.object) kept.push_back(item.object);
    if (item.group == 2) {
      index->AddSecret(*item.object);
    } else {
      e.id = item.old ? index->Add(item.old) : index->Add(std::move(item.facts));
    }
  }
  index->Seal();
  snapshot_ =
      std::make_shared<const ContextSnapshot>(std::make_pair(std::move(kept), std::move(index)));
  entries_ = std::move(next);
  ++builds_;
  return snapshot_;
}

}  // namespace switchboard::rules
