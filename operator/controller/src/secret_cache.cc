#include "secret_cache.h"

#include <algorithm>
#include <set>

namespace switchboard::operator_controller {
namespace {

bool InScope(std::string_view key, std::string_view scope) {
  return scope.empty() || (key.size() > scope.size() && key.substr(0, scope.size()) == scope &&
                           key[scope.size()] == '/');
}

kube::ObjectPtr ViewOf(const SecretCache::RecordPtr& r) {
  return r ? std::make_shared<const nlohmann::json>(ObjectOf(*r)) : nullptr;
}

}  // namespace

SecretCache::SecretCache(kube::Client* client, const std::vector<std::string>& namespaces,
                         kube::WatcherOptions opts) {
  scopes_ = namespaces;
  std::sort(scopes_.begin(), scopes_.end());
  scopes_.erase(std::unique(scopes_.begin(), scopes_.end()), scopes_.end());
  if (scopes_.empty()) scopes_.push_back("");
  opts.stream_list = true;
  opts.transform = nullptr;
  for (const auto& scope : scopes_) {
    watchers_.push_back(std::make_unique<kube::Watcher>(
        client, kube::resources::Secret(), scope, opts,
        [this, scope](kube::WatcherEvent& ev) { Apply(ev, scope); }));
  }
}

SecretCache::~SecretCache() { Stop(); }

void SecretCache::AddEventHandler(kube::StoreEventHandler handler) {
  std::lock_guard lock(handlers_mu_);
  handlers_.push_back(std::move(handler));
}

void SecretCache::Start() {
  for (auto& w : watchers_) w->Start();
}

void SecretCache::Stop() {
  for (auto& w : watchers_) w->Stop();
}

void SecretCache::Apply(kube::WatcherEvent& ev, std::string_view scope) {
  std::vector<Change> changes;
  switch (ev.type) {
    case kube::WatcherEvent::Type::kApplied: {
      auto record = std::make_shared<const SecretRecord>(SecretRecordOf(ev.object));
      ev.object = nullptr;
      std::string key = kube::ObjectKey(record->ns, record->name);
      std::unique_lock lock(mu_);
      auto it = items_.find(key);
      if (it == items_.end()) {
        items_.emplace(std::move(key), record);
        changes.push_back({nullptr, record});
      } else if (it->second->resource_version != record->resource_version) {
        changes.push_back({it->second, record});
        it->second = record;
      }
      break;
    }
    case kube::WatcherEvent::Type::kDeleted: {
      // The handlers see the final state the server sent (it carries the
      // deletion), as kube::Store reports it.
      auto record = std::make_shared<const SecretRecord>(SecretRecordOf(ev.object));
      std::unique_lock lock(mu_);
      items_.erase(kube::ObjectKey(record->ns, record->name));
      changes.push_back({record, nullptr});
      break;
    }
    case kube::WatcherEvent::Type::kRestarted: {
      // Every listed Secret came as a kApplied event before this one; what
      // this watcher's scope holds and the list lacks was deleted meanwhile.
      std::set<std::string_view> listed(ev.listed.begin(), ev.listed.end());
      {
        std::unique_lock lock(mu_);
        for (auto it = items_.begin(); it != items_.end();) {
          if (InScope(it->first, scope) && !listed.count(it->first)) {
            changes.push_back({it->second, nullptr});
            it = items_.erase(it);
          } else {
            ++it;
          }
        }
        if (std::find(synced_.begin(), synced_.end(), scope) == synced_.end()) {
          synced_.emplace_back(scope);
        }
      }
      std::lock_guard lock(sync_mu_);
      sync_cv_.notify_all();
      break;
    }
    case kube::WatcherEvent::Type::kError:
      break;  // the watcher logs it and retries
  }
  Emit(changes);
}

void SecretCache::Emit(const std::vector<Change>& changes) const {
  if (changes.empty()) return;
  std::vector<kube::StoreEventHandler> handlers;
  {
    std::lock_guard lock(handlers_mu_);
    handlers = handlers_;
  }
  if (handlers.empty()) return;
  for (const auto& c : changes) {
    kube::ObjectPtr before = ViewOf(c.before);
    kube::ObjectPtr after = ViewOf(c.after);
    for (const auto& h : handlers) {
      if (!before) {
        if (h.on_add) h.on_add(after);
      } else if (!after) {
        if (h.on_delete) h.on_delete(before);
      } else if (h.on_update) {
        h.on_update(before, after);
      }
    }
  }
}

bool SecretCache::HasSynced() const {
  std::shared_lock lock(mu_);
  return synced_.size() == scopes_.size();
}

bool SecretCache::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(sync_mu_);
  return sync_cv_.wait_for(lock, timeout, [this] { return HasSynced(); });
}

SecretCache::RecordPtr SecretCache::Record(std::string_view ns, std::string_view name) const {
  const std::string key = kube::ObjectKey(ns, name);
  std::shared_lock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

kube::ObjectPtr SecretCache::Get(std::string_view ns, std::string_view name) const {
  return ViewOf(Record(ns, name));
}

kube::ObjectPtr SecretCache::Get(const std::string& key) const {
  std::string ns, name;
  kube::SplitObjectKey(key, &ns, &name);
  return Get(ns, name);
}

size_t SecretCache::Size() const {
  std::shared_lock lock(mu_);
  return items_.size();
}

}  // namespace switchboard::operator_controller
