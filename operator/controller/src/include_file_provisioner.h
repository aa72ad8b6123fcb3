// IncludeFile mode (the default): every installation bound to the server
// becomes a user in one include file, the config Secret, which the NATS
// servers reload. CollectInstallations over the caches, RenderNatsConfig
// (within the Secret's 1 MiB, keeping what the file holds), what the render
// left out recorded in the ConfigIndex (the backends whose verdict changed
// are woken), the config Secret written when its bytes differ and at most
// once per min_write_interval, the status (installations, configHash,
// Ready, ConfigFits). Level-based: any replica renders the same bytes.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "provisioner.h"

namespace switchboard::operator_controller {

class IncludeFileProvisioner : public Provisioner {
 public:
  // `ctx` must outlive it.
  explicit IncludeFileProvisioner(const ReconcileContext& ctx) : ctx_(ctx) {}

  std::string_view mode() const override;
  ServerReport Refused(const ServerCall& call, std::string_view reason,
                       const std::string& message) const override;
  Result<Action> Provision(const ServerCall& call) override;
  // The render's verdicts no longer hold anyone back: their backends look again.
  void Retire(const std::string& key) override;
  void Forget(const std::string& key) override;

 private:
  // Drops the include file's size gauges of server `key` ("ns/name").
  void ForgetGauges(const std::string& key);

  const ReconcileContext& ctx_;
  std::mutex mu_;
  // When this process last wrote each server's config Secret: only to space
  // writes (every write reloads the NATS servers), never to decide what the
  // file holds. Guarded by mu_.
  std::map<std::string, std::chrono::steady_clock::time_point> last_write_;
};

}  // namespace switchboard::operator_controller
