// AuthCallout mode: no user goes into any file. The callout Secret's keys
// (PlanCalloutKeys; owned, never logged), the static config in the config
// Secret (RenderCalloutConfig; same name and key as IncludeFile mode), the
// status (installations = CollectDirectory's entries, configHash,
// authCallout, Ready=True CalloutConfigured), and whether every NATS
// server has an authorizer (asked on AuthorizerChecks' thread, never on a
// reconcile worker, every authorizer_recheck). The authorizers read the
// directory from their own caches.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "provisioner.h"

namespace switchboard::operator_controller {

class CalloutProvisioner : public Provisioner {
 public:
  // `ctx` must outlive it.
  explicit CalloutProvisioner(const ReconcileContext& ctx) : ctx_(ctx) {}

  std::string_view mode() const override;
  // While the generation stays the same, reconciles are at least
  // callout_status_interval apart: every new backend and each of its
  // Secrets wakes the server, and each reconcile reads the whole directory.
  // A wake-up inside the interval is deferred to its end, never dropped; a
  // spec change goes through at once.
  std::optional<Action> Defer(const ServerCall& call) override;
  ServerReport Refused(const ServerCall& call, std::string_view reason,
                       const std::string& message) const override;
  Result<Action> Provision(const ServerCall& call) override;
  // The status part, the availability checks and the gauges go; the
  // callout Secret stays (a switch back must find the same issuer, which
  // the servers' static config names).
  void Retire(const std::string& key) override { Forget(key); }
  void Forget(const std::string& key) override;

 private:
  const ReconcileContext& ctx_;
  ReconcileSpacing spacing_;
};

}  // namespace switchboard::operator_controller
