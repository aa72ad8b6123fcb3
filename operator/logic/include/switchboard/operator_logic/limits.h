// The limits NATS applies to one installation's account: the backend's
// spec.nats.limits over its NatsServer's spec.installationLimits. One pure
// function, used wherever an account is written (the include file's
// account `limits`, an account JWT) and by the backend's status, so they
// always agree.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "switchboard/api/limits.h"
#include "switchboard/api/views.h"

namespace switchboard::operator_logic {

// {max_connections, max_subscriptions, max_payload}, each nullopt for no
// limit. No NATS or JWT types: writers map it to their format.
using InstallationLimits = api::InstallationLimits;

// What a NatsServer says about its installations' limits.
struct LimitsPolicy {
  InstallationLimits defaults;  // spec.installationLimits
  bool raise_allowed = false;   // spec.installationLimits.overrides: LowerOrRaise
  // spec.maxPayload in bytes: a client never gets more, whatever its
  // account says.
  int64_t server_max_payload = api::kEngineMaxPayload;
};

// The server's side, read from the object (NatsServerView). A maxPayload
// that does not parse counts as the default 16Mi (the rules refuse it).
LimitsPolicy LimitsPolicyOf(const api::NatsServerView& server);

// Per limit: the backend's value when it sets one, else the server's
// default, else none. A backend value above the default where the server
// allows only lowering is capped at the default: the rules refuse such a
// backend (InvalidSpec), and until it is corrected the server's ceiling
// holds. maxPayload is then capped at the server's max_payload, which is
// what a client gets (min of account and server). Values are taken as
// given: the rules (api/values.h) bound them.
InstallationLimits EffectiveLimits(const InstallationLimits& backend, const LimitsPolicy& server);

// The limits of one installation as NATS applies them: EffectiveLimits of
// the backend's spec.nats.limits and the server's policy when the server
// gives each installation its own account (isolation: Accounts); none
// otherwise, where installations share one account (the rules refuse
// limits there).
InstallationLimits InstallationLimitsOf(const api::BackendView& backend,
                                        const api::NatsServerView& server);

// The first limit the API's checks refuse (api/values.h: the rules' own
// checks), as its field under spec.nats.limits ("maxPayload") and the
// message; both empty when every set limit is valid. The render leaves an
// installation with such a limit out rather than write it: an account
// max_payload under 16 MiB would stop every engine of the installation.
struct LimitsProblem {
  std::string field;
  std::string message;
};
LimitsProblem CheckLimits(const InstallationLimits& limits);

// status.limits of a PubSubBackend: {maxConnections, maxSubscriptions,
// maxPayload} with only the limits that apply; null when none does.
nlohmann::json LimitsStatus(const InstallationLimits& limits);

}  // namespace switchboard::operator_logic
