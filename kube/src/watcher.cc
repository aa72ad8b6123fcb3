#include "switchboard/kube/watcher.h"

#include <algorithm>
#include <random>

#include "switchboard/common/log.h"

namespace switchboard::kube {

std::string_view WatcherStateName(WatcherState s) {
  switch (s) {
    case WatcherState::kEmpty:
      return "Empty";
    case WatcherState::kInitListed:
      return "InitListed";
    case WatcherState::kWatching:
      return "Watching";
  }
  return "Unknown";
}

Watcher::Watcher(Client* client, ResourceRef resource, std::string ns, WatcherOptions opts,
                 Handler handler)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      opts_(std::move(opts)),
      handler_(std::move(handler)) {}

Watcher::~Watcher() { Stop(); }

void Watcher::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Run(); });
}

void Watcher::Stop() {
  std::shared_ptr<Cancellation> cancel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cancel = cancel_;
  }
  stop_cv_.notify_all();
  if (cancel) cancel->Cancel();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
    // Cancel() closes the socket of an open request; a request that was
    // being opened at that instant sees the flag on its first chunk or the
    // next poke below.
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (stop_cv_.wait_for(lock, std::chrono::milliseconds(100),
                              [this] { return cancel_ == nullptr && !running_; })) {
          break;
        }
        cancel = cancel_;
      }
      if (cancel) cancel->Cancel();
    }
    thread_.join();
  }
}

std::string Watcher::last_resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rv_;
}

namespace {

void TrimBookkeeping(json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return;
  meta->erase("managedFields");
  auto ann = meta->find("annotations");
  if (ann != meta->end() && ann->is_object()) {
    ann->erase("kubectl.kubernetes.io/last-applied-configuration");
  }
}

}  // namespace

void Watcher::Shape(json& object) const {
  if (!object.is_object()) return;
  if (opts_.trim_bookkeeping) TrimBookkeeping(object);
  if (opts_.transform) opts_.transform(object);
}

void Watcher::Emit(WatcherEvent& ev) {
  if (ev.type != WatcherEvent::Type::kRestarted) Shape(ev.object);
  Deliver(ev);
}

void Watcher::Deliver(WatcherEvent& ev) {
  // A throwing handler must not take the watcher thread (and the process)
  // down: log it and go on.
  try {
    handler_(ev);
  } catch (const std::exception& e) {
    log::Error("kube.watcher", "event handler threw",
               {{"resource", resource_.GroupResource()}, {"error", e.what()}});
  } catch (...) {
    log::Error("kube.watcher", "event handler threw", {{"resource", resource_.GroupResource()}});
  }
}

bool Watcher::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !stop_cv_.wait_for(lock, d, [this] { return stopping_; });
}

void Watcher::Run() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = true;
  }
  std::mt19937_64 rng(std::random_device{}());
  auto backoff = opts_.initial_backoff;
  auto fail = [&](const Status& s) {
    log::Warn("kube.watcher", "watch failed; retrying",
              {{"resource", resource_.GroupResource()},
               {"namespace", ns_},
               {"state", std::string(WatcherStateName(state_.load()))},
               {"error", s.ToString()},
               {"retry_ms", backoff.count()}});
    WatcherEvent ev;
    ev.type = WatcherEvent::Type::kError;
    ev.error = s;
    Emit(ev);
    // Jitter (x0.5..1.5) keeps many watchers from hammering a restarted server together.
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    auto d = std::chrono::milliseconds(static_cast<int64_t>(backoff.count() * jitter(rng)));
    backoff = std::min(backoff * 2, opts_.max_backoff);
    return Sleep(d);
  };

  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
    }
    switch (state_.load()) {
      case WatcherState::kEmpty: {
        ListOptions lo;
        lo.label_selector = opts_.label_selector;
        lo.field_selector = opts_.field_selector;
        lo.limit = opts_.page_size;
        if (!opts_.parse_keep.keeps_everything()) lo.keep = &opts_.parse_keep;
        CallOptions co;
        co.timeout = opts_.list_timeout;
        // Each item is shaped as its page arrives, so a relist never holds
        // every page whole; with stream_list it is also handed on at once.
        std::vector<std::string> listed;
        auto list = client_->ListAll(resource_, ns_, lo, co, [&](json& item) {
          // List items lack apiVersion/kind; fill them so handlers see whole objects.
          if (!item.contains("apiVersion")) item["apiVersion"] = resource_.ApiVersion();
          if (!item.contains("kind")) item["kind"] = resource_.kind;
          Shape(item);
          if (!opts_.stream_list) return;
          listed.push_back(ObjectKeyOf(item));
          WatcherEvent applied;
          applied.type = WatcherEvent::Type::kApplied;
          applied.object = std::move(item);
          item = nullptr;
          Deliver(applied);
        });
        if (!list.ok()) {
          if (!fail(list.status())) goto done;
          break;
        }
        WatcherEvent ev;
        ev.type = WatcherEvent::Type::kRestarted;
        if (opts_.stream_list) {
          ev.listed = std::move(listed);
        } else {
          for (auto& item : list.value()["items"]) ev.objects.push_back(std::move(item));
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          rv_ = ResourceVersionOf(list.value());
        }
        Emit(ev);
        lists_.fetch_add(1);
        state_ = WatcherState::kInitListed;
        break;
      }
      case WatcherState::kInitListed:
      case WatcherState::kWatching: {
        WatchOptions wo;
        wo.label_selector = opts_.label_selector;
        wo.field_selector = opts_.field_selector;
        wo.allow_watch_bookmarks = true;
        if (!opts_.parse_keep.keeps_everything()) wo.keep = &opts_.parse_keep;
        // Spread watch ends over [t, 1.5t) so many watchers do not all
        // reconnect at once (client-go does the same).
        if (opts_.watch_timeout_seconds > 0) {
          std::uniform_int_distribution<int64_t> spread(0, opts_.watch_timeout_seconds / 2);
          wo.timeout_seconds = opts_.watch_timeout_seconds + spread(rng);
        }
        auto cancel = std::make_shared<Cancellation>();
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (stopping_) goto done;
          wo.resource_version = rv_;
          cancel_ = cancel;
        }
        state_ = WatcherState::kWatching;
        bool gone = false;
        Status event_error;
        Status s = client_->Watch(
            resource_, ns_, wo,
            [&](WatchEvent& we) {
              if (we.type == WatchEventType::kError) {
                if (we.error.code() == StatusCode::kGone) {
                  gone = true;
                } else {
                  event_error = we.error;
                }
                return false;
              }
              backoff = opts_.initial_backoff;  // the stream is healthy
              std::string rv = ResourceVersionOf(we.object);
              if (we.type != WatchEventType::kBookmark) {
                WatcherEvent ev;
                ev.type = we.type == WatchEventType::kDeleted ? WatcherEvent::Type::kDeleted
                                                              : WatcherEvent::Type::kApplied;
                // Taken, not copied: the copy was the API's whole object
                // (managedFields and all) made once more per event.
                ev.object = std::move(we.object);
                if (!ev.object.contains("apiVersion"))
                  ev.object["apiVersion"] = resource_.ApiVersion();
                if (!ev.object.contains("kind")) ev.object["kind"] = resource_.kind;
                Emit(ev);
              }
              if (!rv.empty()) {
                std::lock_guard<std::mutex> lock(mu_);
                rv_ = rv;
              }
              return true;
            },
            cancel.get());
        {
          std::lock_guard<std::mutex> lock(mu_);
          cancel_ = nullptr;
          if (stopping_) goto done;
        }
        stop_cv_.notify_all();
        if (gone || s.code() == StatusCode::kGone) {
          // Our resourceVersion is older than the server's history: relist.
          log::Info("kube.watcher", "resourceVersion too old; relisting",
                    {{"resource", resource_.GroupResource()}, {"namespace", ns_}});
          state_ = WatcherState::kEmpty;
          break;
        }
        if (!event_error.ok()) s = event_error;
        if (!s.ok()) {
          if (!fail(s)) goto done;
        }
        // A clean end (server timeoutSeconds): resume from rv_ at once.
        break;
      }
    }
  }
done : {
  std::lock_guard<std::mutex> lock(mu_);
  cancel_ = nullptr;
  running_ = false;
}
  stop_cv_.notify_all();
}

Informer::Informer(Client* client, ResourceRef resource, std::string ns, WatcherOptions opts)
    : watcher_(client, std::move(resource), std::move(ns), std::move(opts),
               [this](WatcherEvent& ev) {
                 switch (ev.type) {
                   case WatcherEvent::Type::kRestarted:
                     store_.Replace(std::move(ev.objects));
                     break;
                   case WatcherEvent::Type::kApplied:
                     store_.Upsert(std::move(ev.object));
                     break;
                   case WatcherEvent::Type::kDeleted:
                     store_.Remove(ev.object);
                     break;
                   case WatcherEvent::Type::kError:
                     if (on_error_) on_error_(ev.error);
                     break;
                 }
               }) {}

}  // namespace switchboard::kube
