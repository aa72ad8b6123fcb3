// The NATS side of per-installation usage: one system-account connection
// per NatsServer that keeps the disconnect events it hears, and asks every
// server for its connections (CONNZ, every page) and, with an account per
// installation, its accounts' counters (STATZ). Thin: the requests and the
// replies' meaning are operator_logic (usage.h); this only sends and
// gathers.
//
// Thread-safety: Collect may be called from one thread at a time; the
// events arrive on the subscription's nats.c thread and are handed over
// under a lock. Destroying the source unsubscribes (waiting for the event
// handler) before the connection closes.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/usage.h"
#include "switchboard/pubsub/nats_client.h"

namespace switchboard::operator_controller {

class UsageSource {
 public:
  // Connects as the system user (`options`) and subscribes to the
  // disconnect events before anything is asked, so no connection closed
  // after the first round goes unseen.
  static Result<std::unique_ptr<UsageSource>> Open(const pubsub::NatsOptions& options);
  ~UsageSource();

  // One round: every server's connections (`account` "" for every
  // account's), STATZ when `statz`, and the events since the last call.
  // `window`: how long replies to a ping are gathered (every server of a
  // cluster answers; nobody knows how many there are). A server whose next
  // page does not come is left out of `answered`. An error only when no
  // server answered at all.
  Result<operator_logic::UsageRound> Collect(const std::string& account, bool statz,
                                             std::chrono::milliseconds window);

 private:
  UsageSource() = default;
  std::unique_ptr<pubsub::NatsClient> client_;
  std::mutex mu_;
  std::vector<operator_logic::ClosedConnection> events_;  // guarded by mu_
  // Declared last: destroyed (unsubscribed) first.
  std::unique_ptr<pubsub::Subscription> events_sub_;
};

}  // namespace switchboard::operator_controller
