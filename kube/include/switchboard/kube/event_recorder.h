// Records core/v1 Events about an object ("Warning ConfigInvalid: ...").
// Record() never blocks on the network: events go to a bounded in-memory
// queue that one background thread writes; when the queue is full the event
// is dropped (and counted). Repeats of the same (object, type, reason,
// message) within the aggregation window update the existing Event's count
// and lastTimestamp instead of creating a new one.
//
// Never put secret values in a reason or message.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "switchboard/kube/client.h"

namespace switchboard::kube {

enum class EventType { kNormal, kWarning };

class EventRecorder {
 public:
  struct Options {
    std::string component = "switchboard";  // source.component / reportingController
    std::string instance;                   // reportingInstance (e.g. pod name); default hostname
    size_t queue_capacity = 1000;
    std::chrono::milliseconds aggregation_window{std::chrono::minutes(10)};
    std::chrono::milliseconds call_timeout{std::chrono::seconds(10)};
  };

  // `client` must outlive the recorder.
  EventRecorder(Client* client, Options opts);
  ~EventRecorder();  // flushes what is queued (bounded by call_timeout each), then stops
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // `involved` is the object (its apiVersion, kind, metadata.name/namespace/
  // uid/resourceVersion are used). Returns at once.
  void Record(const json& involved, EventType type, std::string reason, std::string message);

  // Waits until everything recorded so far is written (tests, shutdown).
  bool Flush(std::chrono::milliseconds timeout);

  uint64_t dropped() const;
  uint64_t failed() const;

  // The Event body for a first occurrence (pure; exposed for tests).
  static json BuildEvent(const json& involved, EventType type, const std::string& reason,
                         const std::string& message, const Options& opts,
                         std::chrono::system_clock::time_point now, const std::string& name);

 private:
  struct Pending {
    json involved;
    EventType type;
    std::string reason;
    std::string message;
    std::chrono::system_clock::time_point when;
  };
  struct Seen {
    std::string ns;
    std::string name;
    int64_t count = 0;
    std::chrono::steady_clock::time_point first;
  };
  void Run();
  void Write(const Pending& p);
  void Failed(const char* what, const Pending& p, const Status& s);

  Client* client_;
  Options opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;         // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  bool busy_ = false;                 // a write is in flight; guarded by mu_
  uint64_t dropped_ = 0;              // guarded by mu_
  uint64_t failed_ = 0;               // guarded by mu_
  std::map<std::string, Seen> seen_;  // writer thread only
  std::chrono::steady_clock::time_point last_failure_log_{};  // writer thread only
  uint64_t suppressed_logs_ = 0;                              // writer thread only
  std::thread thread_;
};

}  // namespace switchboard::kube
