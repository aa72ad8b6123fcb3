// switchboard-authorizer: watches NatsServers (kube::MultiStore),
// PubSubBackends and the Secrets Switchboard manages (an InstallationCache
// of typed records, installations.h), keeps one ServerSession per NatsServer it serves,
// and serves /healthz, /readyz and /metrics (kube::EndpointsServer).
//
// Nothing is subscribed before every cache has synced: a Directory built
// from a partial cache would refuse installations that exist. Every
// replica decides from the same cluster state (no leader).
#pragma once

#include <memory>

#include "switchboard/authorizer/options.h"
#include "switchboard/authorizer/session.h"
#include "switchboard/common/status.h"

namespace switchboard::authorizer {

class Authorizer {
 public:
  // `session` fills in what the flags do not set (tests shorten waits).
  explicit Authorizer(Options options, SessionOptions session = {});
  ~Authorizer();
  Authorizer(const Authorizer&) = delete;
  Authorizer& operator=(const Authorizer&) = delete;

  // Until Stop(): then drains every session (unsubscribes, answers what
  // was queued, closes) and returns. Errors: the kubeconfig, the client,
  // an address it cannot listen on.
  Status Run();
  // Async-signal-safe: an atomic flag and an eventfd write.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "" when ready, else why not: caches not synced, or a served NatsServer it
// is connected to but not subscribed on. A server it cannot reach does not
// hold readiness back (another replica may reach it; and a pod that is
// never ready for an unreachable server would be restarted for nothing).
// A server whose TLS handshake or certificate check failed does: the CA is
// the same for every replica, so none of them serves it.
std::string ReadinessOf(bool synced,
                        const std::vector<std::pair<std::string, SessionHealth>>& sessions);

}  // namespace switchboard::authorizer
