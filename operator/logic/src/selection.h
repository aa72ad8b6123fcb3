// The installations a NatsServer serves, with their stored credentials: one
// selection over InstallationRecords for the include file
// (CollectInstallations) and the callout directory (CollectDirectory).
// Private; cluster_render.h describes the rules.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/api/views.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/installation_record.h"
#include "switchboard/operator_logic/limits.h"

namespace switchboard::operator_logic::internal {

struct SelectedBackend {
  const InstallationRecord* record;  // credentials set
  size_t index = 0;                  // its position in the records selected from
  // The limits NATS applies to its account (InstallationLimitsOf): none
  // unless the server isolates installations in accounts.
  InstallationLimits limits = {};
};

// Bound to `server`, not being deleted, namespace admitted, and usable
// credentials (InstallationRecord::credentials). Every other record bound
// to it gets a line in `skipped`. Points into `records`.
std::vector<SelectedBackend> SelectBackends(const api::NatsServerView& server,
                                            const std::vector<const InstallationRecord*>& records,
                                            std::vector<std::string>& skipped);

// The records of the backends among `backends` bound to `server`, with
// their credentials Secrets (`secret`): what the object overloads select
// over. Null backends are skipped.
std::vector<InstallationRecord> RecordsBoundTo(const api::NatsServerView& server,
                                               const std::vector<const nlohmann::json*>& backends,
                                               const SecretLookup& secret);
std::vector<const InstallationRecord*> Pointers(const std::vector<InstallationRecord>& records);

}  // namespace switchboard::operator_logic::internal
