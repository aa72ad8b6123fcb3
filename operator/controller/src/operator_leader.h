// The operator's leadership (--leader-elect): the elector over the Lease,
// the renewer thread, the hand-over at shutdown. Without --leader-elect it
// leads at once and has no elector.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "switchboard/common/status.h"
#include "switchboard/kube/client.h"
#include "switchboard/operator_controller/leader_election.h"
#include "switchboard/operator_controller/options.h"

namespace switchboard::operator_controller {

// The Lease's namespace: --lease-namespace, else $POD_NAMESPACE, else the
// kubeconfig's namespace.
std::string LeaseNamespace(const Options& opts, const std::string& kubeconfig_namespace);
// --identity, else <hostname>_<pid>.
std::string LeaseIdentity(const Options& opts);

class Leadership {
 public:
  // `client` must outlive this. The elector exists from here on, before any
  // thread that reads it starts.
  Leadership(const Options& opts, kube::Client* client, const std::string& kubeconfig_namespace);
  ~Leadership();  // joins the renewer (after Stop())
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  // Null without --leader-elect. Set by the constructor, read-only after,
  // so any thread may read it.
  LeaderElector* elector() const { return elector_.get(); }

  // Blocks until this process leads (true) or Stop() (false). Then renews
  // on a thread of its own, which calls `on_lost` when a renewal failed
  // past the deadline.
  bool Acquire(std::function<void()> on_lost);
  // Wakes Acquire and the renewer. Takes the elector's lock: never from a
  // signal handler (the stop watcher calls it).
  void Stop();
  // After Stop(): joins the renewer and, unless the Lease was lost, gives
  // it up so a standby takes over at once.
  void Release();
  bool lost() const { return lost_; }

 private:
  std::unique_ptr<LeaderElector> elector_;  // see elector()
  std::thread renewer_;                     // started by Acquire, joined by Release
  std::atomic<bool> lost_{false};           // written by the renewer, read by Run
};

}  // namespace switchboard::operator_controller
