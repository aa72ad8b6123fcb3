#include "switchboard/operator_controller/controller.h"

#include "switchboard/common/log.h"

namespace switchboard::operator_controller {

Controller::Controller(std::string kind, Reconciler* reconciler, Metrics* metrics, int workers,
                       kube::WorkQueue::Options queue_options)
    : kind_(std::move(kind)),
      reconciler_(reconciler),
      metrics_(metrics),
      workers_(workers < 1 ? 1 : workers),
      queue_(queue_options) {}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  for (int i = 0; i < workers_; i++) threads_.emplace_back([this] { Worker(); });
}

void Controller::Stop() {
  queue_.ShutDown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Controller::Worker() {
  while (auto key = queue_.Get()) {
    if (metrics_) metrics_->SetQueueDepth(kind_, static_cast<double>(queue_.Depth()));
    const auto start = std::chrono::steady_clock::now();
    Result<Action> result = Status::Internal("reconcile threw");
    try {
      result = reconciler_->Reconcile(*key);
    } catch (const std::exception& e) {
      // A bug must not kill the worker; it is retried with backoff like an error.
      result = Status::Internal(std::string("reconcile threw: ") + e.what());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string label;
    if (!result.ok()) {
      label = "error";
      const bool conflict = result.status().code() == StatusCode::kConflict;
      // A conflict is someone else's newer write: retry soon, quietly.
      (conflict ? log::Debug : log::Warn)("controller", "reconcile failed; retrying with backoff",
                                          {{"kind", kind_},
                                           {"key", *key},
                                           {"error", result.status().ToString()},
                                           {"retryInMs", queue_.NextBackoff(*key).count()}});
      queue_.AddRateLimited(*key);
    } else {
      queue_.Forget(*key);
      switch (result->kind) {
        case Action::Kind::kAwaitChange:
          label = "success";
          break;
        case Action::Kind::kRequeueAfter:
          label = "requeue";
          queue_.AddAfter(*key, result->after);
          break;
        case Action::Kind::kTerminal:
          label = "invalid";
          break;
      }
    }
    if (metrics_) metrics_->ObserveReconcile(kind_, label, seconds);
    reconciles_++;
    queue_.Done(*key);
  }
}

}  // namespace switchboard::operator_controller
