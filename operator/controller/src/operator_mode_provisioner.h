// AuthCallout with isolation: Accounts: NATS in operator mode, an account
// per installation, no reload ever.
//
// - The keys (operator_logic::PlanCalloutKeys and PlanOperatorModeSeeds):
//   the callout keys plus the operator, system account, system and
//   authorizer users and the one installation signing key, in the callout
//   Secret (owned, never logged); the callout issuer is the auth account.
// - The static config (RenderOperatorModeConfig) in the config Secret,
//   same name and key as the other modes: the operator JWT, the preloaded
//   system and auth accounts, a full resolver, default_sentinel. Its bytes
//   change only with the keys, spec.maxPayload or resolverDir.
// - One account per installation (the directory's entries, as the
//   authorizers build it): its key derived from the installation signing
//   seed and the installation's namespace/name (InstallationAccountKey),
//   its claims from InstallationAccountClaims with EffectiveLimits. An
//   AccountSyncs run (account_syncs.h; its own thread) brings every
//   server's resolver in line, and asks the authorizer question of
//   AuthCallout mode on the same connection; submitted when what is
//   desired changes (the servers' lookups are answered for it from then
//   on) and every RetryTiming::account_resync otherwise, so a
//   restarted server's emptied store is filled again with no memory of
//   earlier pushes.
// - The status: CalloutServerStatus (issuer = the auth account) plus
//   status.operatorMode {operator, systemAccount, installationSigningKey,
//   accounts, servers}; Ready=False AccountSyncFailed while the last run
//   failed.
#pragma once

#include <string>

#include "provisioner.h"

namespace switchboard::operator_controller {

class OperatorModeProvisioner : public Provisioner {
 public:
  // `ctx` must outlive it.
  explicit OperatorModeProvisioner(const ReconcileContext& ctx) : ctx_(ctx) {}

  std::string_view mode() const override;
  // AuthCallout servers with isolation: Accounts.
  bool Serves(const api::NatsServerView& server) const override;
  // Spaced by what the last reconcile took (ServerReconcileSpacing), at
  // most callout_status_interval apart as AuthCallout's reconciles are.
  std::optional<Action> Defer(const ServerCall& call) override;
  ServerReport Refused(const ServerCall& call, std::string_view reason,
                       const std::string& message) const override;
  Result<Action> Provision(const ServerCall& call) override;
  // The sync runs stop; the callout Secret stays (a switch back finds the
  // same operator, which the servers' static config names). The accounts
  // stay in the resolvers until the servers run another config.
  void Retire(const std::string& key) override;
  void Forget(const std::string& key) override;

 private:
  const ReconcileContext& ctx_;
  ReconcileSpacing spacing_;
};

}  // namespace switchboard::operator_controller
