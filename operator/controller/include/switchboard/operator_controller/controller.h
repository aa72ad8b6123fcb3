// A controller loop (kube-runtime's runner, controller-runtime's
// Controller): keys go into a de-duplicating work queue; `workers` threads
// take them and call Reconcile(key). The queue never hands one key to two
// workers at once, so a Reconciler needs no per-object locking.
//
// Reconcile is level-based: it gets "namespace/name", reads the current
// state and converges; it never sees the event that caused it. It returns
//   Action::AwaitChange()      done; run again only when something changes
//   Action::RequeueAfter(d)    done for now; look again after d (probe)
//   Action::Terminal()         the object is invalid (status already says
//                              so); not retried until it changes
// or an error Status, which the error policy turns into a per-key
// exponential backoff (WorkQueue::AddRateLimited). Success resets it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/kube/workqueue.h"
#include "switchboard/operator_controller/metrics.h"

namespace switchboard::operator_controller {

struct Action {
  enum class Kind { kAwaitChange, kRequeueAfter, kTerminal };
  Kind kind = Kind::kAwaitChange;
  std::chrono::milliseconds after{0};

  static Action AwaitChange() { return {}; }
  static Action RequeueAfter(std::chrono::milliseconds d) { return {Kind::kRequeueAfter, d}; }
  static Action Terminal() { return {Kind::kTerminal, {}}; }
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Called from worker threads; never concurrently for the same key.
  virtual Result<Action> Reconcile(const std::string& key) = 0;
};

class Controller {
 public:
  // `reconciler` and `metrics` (may be null) must outlive the controller.
  Controller(std::string kind, Reconciler* reconciler, Metrics* metrics, int workers,
             kube::WorkQueue::Options queue_options = {});
  ~Controller();  // Stop()
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void Enqueue(const std::string& key) { queue_.Add(key); }
  void EnqueueAfter(const std::string& key, std::chrono::milliseconds d) {
    queue_.AddAfter(key, d);
  }

  void Start();
  // Shuts the queue down and joins the workers (a running reconcile
  // finishes first).
  void Stop();

  const std::string& kind() const { return kind_; }
  kube::WorkQueue& queue() { return queue_; }
  // Reconciles finished so far (any result); tests and benchmarks.
  uint64_t reconciles() const { return reconciles_.load(); }

 private:
  void Worker();

  std::string kind_;
  Reconciler* reconciler_;
  Metrics* metrics_;
  int workers_;
  kube::WorkQueue queue_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> reconciles_{0};
};

}  // namespace switchboard::operator_controller
