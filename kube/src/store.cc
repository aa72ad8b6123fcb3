#include "switchboard/kube/store.h"

namespace switchboard::kube {

namespace {
struct Change {
  enum Kind { kAdd, kUpdate, kDelete } kind;
  ObjectPtr old_obj;
  ObjectPtr new_obj;
};
}  // namespace

std::vector<StoreEventHandler> Store::Handlers() const {
  std::lock_guard<std::mutex> lock(handlers_mu_);
  return handlers_;
}

static void Emit(const std::vector<StoreEventHandler>& hs, const std::vector<Change>& changes) {
  for (const auto& c : changes) {
    for (const auto& h : hs) {
      switch (c.kind) {
        case Change::kAdd:
          if (h.on_add) h.on_add(c.new_obj);
          break;
        case Change::kUpdate:
          if (h.on_update) h.on_update(c.old_obj, c.new_obj);
          break;
        case Change::kDelete:
          if (h.on_delete) h.on_delete(c.old_obj);
          break;
      }
    }
  }
}

void Store::Replace(std::vector<json> objects) {
  std::map<std::string, ObjectPtr> next;
  std::vector<Change> changes;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    // An object the relist returns at the version already cached keeps the
    // cached copy, and its listed copy is freed at once: a relist of an
    // unchanged cache never holds every object twice.
    for (auto& o : objects) {
      std::string key = ObjectKeyOf(o);
      auto it = items_.find(key);
      if (it != items_.end() && ResourceVersionOf(*it->second) == ResourceVersionOf(o)) {
        next[key] = it->second;
      } else {
        next[key] = std::make_shared<const json>(std::move(o));
      }
      o = json();
    }
    for (const auto& [key, obj] : next) {
      auto it = items_.find(key);
      if (it == items_.end()) {
        changes.push_back({Change::kAdd, nullptr, obj});
      } else if (it->second != obj) {
        changes.push_back({Change::kUpdate, it->second, obj});
      }
    }
    for (const auto& [key, obj] : items_) {
      if (next.find(key) == next.end()) changes.push_back({Change::kDelete, obj, nullptr});
    }
    items_ = std::move(next);
    synced_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(sync_mu_);
    sync_cv_.notify_all();
  }
  Emit(Handlers(), changes);
}

void Store::Upsert(json obj) {
  std::string key = ObjectKeyOf(obj);
  auto ptr = std::make_shared<const json>(std::move(obj));
  Change c{Change::kAdd, nullptr, ptr};
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = items_.find(key);
    if (it != items_.end()) {
      c = {Change::kUpdate, it->second, ptr};
      it->second = ptr;
    } else {
      items_.emplace(key, ptr);
    }
  }
  Emit(Handlers(), {c});
}

void Store::Remove(const json& obj) {
  std::string key = ObjectKeyOf(obj);
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    items_.erase(key);
  }
  // Report the final state the server sent (it carries the deletion).
  Emit(Handlers(), {{Change::kDelete, std::make_shared<const json>(obj), nullptr}});
}

bool Store::HasSynced() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return synced_;
}

bool Store::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(sync_mu_);
  return sync_cv_.wait_for(lock, timeout, [this] { return HasSynced(); });
}

ObjectPtr Store::Get(const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

ObjectPtr Store::Get(std::string_view ns, std::string_view name) const {
  return Get(ObjectKey(ns, name));
}

std::vector<ObjectPtr> Store::List() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v);
  return out;
}

std::vector<std::string> Store::Keys() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(k);
  return out;
}

size_t Store::Size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return items_.size();
}

void Store::AddEventHandler(StoreEventHandler handler) {
  std::lock_guard<std::mutex> lock(handlers_mu_);
  handlers_.push_back(std::move(handler));
}

}  // namespace switchboard::kube
