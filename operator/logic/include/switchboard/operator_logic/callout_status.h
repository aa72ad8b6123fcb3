// A NatsServer in AuthCallout mode: its status, and whether every NATS
// server has an authorizer subscribed on the callout subject. Pure: the
// controller asks the servers (the system account's SUBSZ ping) and passes
// the replies in.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/api/constants.h"
#include "switchboard/common/status.h"
#include "switchboard/operator_logic/conditions.h"

namespace switchboard::operator_logic {

// Asked as api::kCalloutSystemUsername; every server of a cluster answers.
// SUBSZ filtered on the callout account and tested against the callout
// subject lists the subscriptions of that server's own clients only
// (nats-server's Subsz reads the account's local subscriptions, not the
// interest routed from other servers), so a reply with none means no
// authorizer is connected to that server. CONNZ would list connections,
// not whether they subscribed.
inline constexpr std::string_view kAuthorizerPingSubject = "$SYS.REQ.SERVER.PING.SUBSZ";
// `account`: the auth account's name as the server knows it (in operator
// mode, its public key).
std::string AuthorizerPingBody(std::string_view account = api::kCalloutAuthAccount);

// What AuthorizerAvailable and status.authCallout's counts say.
struct AuthorizerAvailability {
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;  // AuthorizersSubscribed | NoAuthorizer | ServerUnreachable
  std::string message;
  int authorizers = 0;  // servers (of those that answered) with at least one authorizer
  int servers = 0;      // servers that answered
  bool operator==(const AuthorizerAvailability&) const = default;
};

// From the raw replies to the ping, or the error of asking (no server
// reachable, the system user refused). Replies that are not a SUBSZ answer
// are left out of the count and named in the message.
AuthorizerAvailability DecideAuthorizerAvailability(
    const Result<std::vector<std::string>>& replies);

// Ready's message when the NATS servers refused the operator's connection
// because they do not run the static config the NatsServer asks for yet:
// isolation: Accounts needs NATS operator mode, which nats-server cannot
// reload into or out of, so after a switch the servers keep the config they
// started on until each is restarted. `config_secret` is "<ns>/<name>" of
// the config Secret; `error` the connection's own error.
std::string NotOnStaticConfigMessage(std::string_view config_secret, std::string_view error);

struct CalloutServerStatusInput {
  int64_t generation = 0;
  int installations = 0;    // CollectDirectory's entries
  std::string config_hash;  // "" keeps the previous one
  std::string issuer;       // "" keeps the previous one
  std::string account;
  std::string failure_reason;  // "": Ready=True CalloutConfigured
  std::string failure_message;
  // nullopt: no answer yet for this config; the previous condition and
  // counts stay.
  std::optional<AuthorizerAvailability> authorizers;
};

// The new .status: observedGeneration, installations, configHash,
// authCallout {issuer, account, authorizers, servers}, Ready and
// AuthorizerAvailable; no ConfigFits (the static file cannot fill up).
nlohmann::json ComputeCalloutServerStatus(const nlohmann::json& previous,
                                          const CalloutServerStatusInput& input,
                                          std::string_view now_rfc3339);

// `previous` without what only AuthCallout mode reports (authCallout,
// AuthorizerAvailable): what ComputeServerStatus starts from in IncludeFile
// mode, so a server switched back does not keep them.
nlohmann::json WithoutCalloutStatus(const nlohmann::json& previous);

// The event for an AuthorizerAvailable change: Warning when it turns False
// (a server has no authorizer: new connections there may fail), Normal when
// it turns True after having been False; nothing for a first True, an
// Unknown or an unchanged reason.
std::optional<StatusEvent> AuthorizerAvailableEvent(const nlohmann::json& previous,
                                                    const nlohmann::json& next);

}  // namespace switchboard::operator_logic
