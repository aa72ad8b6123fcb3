#include "switchboard/kube/event_recorder.h"

#include <unistd.h>

#include <optional>
#include <random>

#include "switchboard/common/log.h"
#include "switchboard/common/rfc3339.h"

namespace switchboard::kube {

namespace {

std::string Hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

// client-go names events <object>.<unique hex>; the suffix keeps names unique.
std::string EventName(const std::string& object_name) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char suffix[20];
  std::snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(rng()));
  std::string base = object_name.empty() ? "object" : object_name;
  if (base.size() > 200) base.resize(200);
  return base + "." + suffix;
}

}  // namespace

EventRecorder::EventRecorder(Client* client, Options opts)
    : client_(client), opts_(std::move(opts)) {
  if (opts_.instance.empty()) opts_.instance = Hostname();
  thread_ = std::thread([this] { Run(); });
}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EventRecorder::Record(const json& involved, EventType type, std::string reason,
                           std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  if (queue_.size() >= opts_.queue_capacity) {
    ++dropped_;
    return;
  }
  // Only the identifying fields are kept: never copy an object's data
  // (it may be a Secret) into the queue.
  json ref = json::object();
  if (involved.contains("apiVersion")) ref["apiVersion"] = involved["apiVersion"];
  if (involved.contains("kind")) ref["kind"] = involved["kind"];
  json meta = json::object();
  for (const char* f : {"name", "namespace", "uid", "resourceVersion"}) {
    if (involved.contains("metadata") && involved["metadata"].contains(f)) {
      meta[f] = involved["metadata"][f];
    }
  }
  ref["metadata"] = meta;
  queue_.push_back({std::move(ref), type, std::move(reason), std::move(message),
                    std::chrono::system_clock::now()});
  cv_.notify_one();
}

bool EventRecorder::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; });
}

uint64_t EventRecorder::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

uint64_t EventRecorder::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

json EventRecorder::BuildEvent(const json& involved, EventType type, const std::string& reason,
                               const std::string& message, const Options& opts,
                               std::chrono::system_clock::time_point now, const std::string& name) {
  std::string ns = NamespaceOf(involved);
  if (ns.empty()) ns = "default";  // events about cluster-scoped objects
  json obj_ref = {{"apiVersion", involved.value("apiVersion", "")},
                  {"kind", involved.value("kind", "")},
                  {"name", NameOf(involved)}};
  if (!NamespaceOf(involved).empty()) obj_ref["namespace"] = NamespaceOf(involved);
  if (!UidOf(involved).empty()) obj_ref["uid"] = UidOf(involved);
  if (!ResourceVersionOf(involved).empty()) {
    obj_ref["resourceVersion"] = ResourceVersionOf(involved);
  }
  // The API limits messages to 1 KiB in events.k8s.io; keep core events similar.
  std::string msg = message.size() > 1024 ? message.substr(0, 1021) + "..." : message;
  std::string ts = rfc3339::Format(now, rfc3339::Fraction::kNone);
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"involvedObject", obj_ref},
          {"type", type == EventType::kWarning ? "Warning" : "Normal"},
          {"reason", reason},
          {"message", msg},
          {"source", {{"component", opts.component}, {"host", opts.instance}}},
          {"reportingComponent", opts.component},
          {"reportingInstance", opts.instance},
          {"firstTimestamp", ts},
          {"lastTimestamp", ts},
          {"eventTime", nullptr},
          {"count", 1}};
}

void EventRecorder::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<std::chrono::steady_clock::time_point> stop_deadline;
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_) return;
    if (stopping_) {
      // Shutdown flushes for at most one call timeout, so a hung API server
      // cannot hold the process up for queue_capacity calls.
      auto now = std::chrono::steady_clock::now();
      if (!stop_deadline) stop_deadline = now + opts_.call_timeout;
      if (now >= *stop_deadline) {
        dropped_ += queue_.size();
        queue_.clear();
        cv_.notify_all();
        return;
      }
    }
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Write(p);
    lock.lock();
    busy_ = false;
    cv_.notify_all();  // Flush() waiters
  }
}

void EventRecorder::Failed(const char* what, const Pending& p, const Status& s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++failed_;
  }
  // At most one log line per 10 s: an unreachable API server must not turn
  // every event into a log line.
  auto now = std::chrono::steady_clock::now();
  if (last_failure_log_.time_since_epoch().count() != 0 &&
      now - last_failure_log_ < std::chrono::seconds(10)) {
    ++suppressed_logs_;
    return;
  }
  log::Warn(
      "kube.events", what,
      {{"reason", p.reason}, {"error", s.ToString()}, {"suppressed_since_last", suppressed_logs_}});
  last_failure_log_ = now;
  suppressed_logs_ = 0;
}

void EventRecorder::Write(const Pending& p) {
  // Aggregation key: the same object, type, reason and message.
  std::string key = UidOf(p.involved) + "|" + ObjectKeyOf(p.involved) + "|" +
                    p.involved.value("kind", "") + "|" +
                    (p.type == EventType::kWarning ? "W" : "N") + "|" + p.reason + "|" + p.message;
  auto now_steady = std::chrono::steady_clock::now();
  CallOptions co;
  co.timeout = opts_.call_timeout;
  auto it = seen_.find(key);
  if (it != seen_.end() && now_steady - it->second.first < opts_.aggregation_window) {
    json patch = {{"count", it->second.count + 1},
                  {"lastTimestamp", rfc3339::Format(p.when, rfc3339::Fraction::kNone)}};
    auto r = client_->Patch(resources::Event(), it->second.ns, it->second.name, PatchType::kMerge,
                            patch, {}, co);
    if (r.ok()) {
      ++it->second.count;
      return;
    }
    if (r.status().code() != StatusCode::kNotFound) {
      Failed("event update failed", p, r.status());
      return;
    }
    seen_.erase(it);  // the event expired (TTL); create a new one
  }
  // Bound the cache: forget the oldest entries (cheap enough at this size).
  if (seen_.size() >= 4096) {
    auto oldest = seen_.begin();
    for (auto i = seen_.begin(); i != seen_.end(); ++i) {
      if (i->second.first < oldest->second.first) oldest = i;
    }
    seen_.erase(oldest);
  }
  std::string name = EventName(NameOf(p.involved));
  json ev = BuildEvent(p.involved, p.type, p.reason, p.message, opts_, p.when, name);
  auto r = client_->Create(resources::Event(), ev, {}, co);
  if (!r.ok()) {
    Failed("event create failed", p, r.status());
    return;
  }
  seen_[key] = Seen{NamespaceOf(r.value()), name, 1, now_steady};
}

}  // namespace switchboard::kube
