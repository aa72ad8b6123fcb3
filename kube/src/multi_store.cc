#include "switchboard/kube/multi_store.h"

#include <algorithm>

namespace switchboard::kube {

MultiStore::MultiStore(Client* client, ResourceRef resource,
                       const std::vector<std::string>& namespaces, WatcherOptions opts)
    : all_(namespaces.empty()), namespaces_(namespaces) {
  // One informer per namespace, in the order of their keys' prefixes
  // ("<ns>/"), so List() is the stores' sorted lists one after another.
  std::sort(namespaces_.begin(), namespaces_.end(),
            [](const std::string& a, const std::string& b) { return a + "/" < b + "/"; });
  namespaces_.erase(std::unique(namespaces_.begin(), namespaces_.end()), namespaces_.end());
  if (all_) {
    informers_.push_back(std::make_unique<Informer>(client, resource, "", opts));
  } else {
    for (const auto& ns : namespaces_) {
      informers_.push_back(std::make_unique<Informer>(client, resource, ns, opts));
    }
  }
}

void MultiStore::AddEventHandler(const StoreEventHandler& handler) {
  for (auto& i : informers_) i->store().AddEventHandler(handler);
}

void MultiStore::Start() {
  for (auto& i : informers_) i->Start();
}

void MultiStore::Stop() {
  for (auto& i : informers_) i->Stop();
}

bool MultiStore::HasSynced() const {
  for (auto& i : informers_) {
    if (!i->store().HasSynced()) return false;
  }
  return true;
}

bool MultiStore::WaitForSync(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (auto& i : informers_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    if (!i->store().WaitForSync(left)) return false;
  }
  return true;
}

Informer* MultiStore::For(std::string_view ns) const {
  if (all_) return informers_[0].get();
  for (size_t i = 0; i < namespaces_.size(); i++) {
    if (namespaces_[i] == ns) return informers_[i].get();
  }
  return nullptr;
}

ObjectPtr MultiStore::Get(std::string_view ns, std::string_view name) const {
  Informer* inf = For(ns);
  if (!inf) return nullptr;
  return inf->store().Get(ns, name);
}

ObjectPtr MultiStore::Get(const std::string& key) const {
  std::string ns, name;
  kube::SplitObjectKey(key, &ns, &name);
  return Get(ns, name);
}

std::vector<ObjectPtr> MultiStore::List(std::string_view ns) const {
  std::vector<ObjectPtr> out;
  for (auto& i : informers_) {
    for (auto& o : i->store().List()) {
      if (ns.empty() || kube::NamespaceOf(*o) == ns) out.push_back(o);
    }
  }
  return out;
}

size_t MultiStore::Size() const {
  size_t n = 0;
  for (auto& i : informers_) n += i->store().Size();
  return n;
}

}  // namespace switchboard::kube
