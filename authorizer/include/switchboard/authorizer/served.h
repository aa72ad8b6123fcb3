// One NatsServer as the authorizer serves it, built from its records: where
// to connect (its URLs, the authorizer's and the system user's passwords
// from the callout Secret), the issuer key that signs, and the Directory of
// who may connect (operator_logic::CollectDirectory, the same selection the
// include file renders). Immutable: a cache change builds a new one, and
// the request path reads whichever snapshot it took.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/authorizer/operator_mode.h"
#include "switchboard/common/status.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/installation_record.h"

namespace switchboard::authorizer {

struct ServedServer {
  std::string ns, name;
  std::string urls;  // the NatsServer's comma-separated seeds
  std::string account;
  std::shared_ptr<const natsauth::KeyPair> issuer;
  operator_logic::Credentials authorizer;  // connects as api::kAuthorizerUsername
  operator_logic::Credentials system;      // CONNZ and KICK as api::kCalloutSystemUsername
  // The callout Secret's "ca.crt" (spec.tls.caSecretRef, copied by the
  // operator): the only CA the connections trust. "" when none; then TLS
  // only with a tls:// URL, verified against the system's trust store.
  std::string ca;
  std::shared_ptr<const operator_logic::Directory> directory;
  // isolation: Accounts (NATS operator mode): the keys, the connections'
  // user JWTs and the signer (operator_mode.h); null in config mode.
  std::shared_ptr<const OperatorMode> operator_mode;
  // The operator-mode keys the callout Secret holds, whatever the
  // isolation (it keeps them after a switch back to Permissions): what a
  // server still in operator mode is logged in to and answered with
  // (LoginsOf). Null when the Secret has none.
  std::shared_ptr<const OperatorMode> operator_mode_keys;

  std::string key() const { return ns + "/" + name; }
  // What the connections depend on: a different value (a new CA too)
  // replaces the session, whose new connections use it.
  bool SameConnections(const ServedServer& other) const;
};

// The logins the authorizer's connections try, in this order, and the mode
// each answers in: null is config mode (the Secret's passwords, answers for
// the configured account), otherwise that operator mode (its users' JWTs,
// answers in the installations' accounts). First the served isolation's;
// then the other one's, when the Secret holds what it needs (config mode's
// passwords always; operator mode's keys once the server was switched to
// Accounts). Why: nats-server cannot reload into or out of operator mode,
// so after a switch of isolation each server runs the old config until it
// restarts, and refuses the new isolation's login; the other login keeps
// that server's new connections admitted (in the old isolation's walls)
// through the roll, instead of refused after the callout timeout.
std::vector<std::shared_ptr<const OperatorMode>> LoginsOf(const ServedServer& served);

// A callout Secret as the authorizer keeps it: decoded once
// (DecodeSecretData, DecodeCalloutKeys), or why it does not decode (the
// decoder's message, never a value). Its operator-mode keys are decoded at
// the same time into `operator_mode` (OperatorModeOf), which a server in
// isolation: Accounts uses and any other server ignores; without them,
// `operator_mode_problem` says why (a config-mode Secret has none).
struct CalloutSecret {
  std::optional<operator_logic::CalloutKeys> keys;
  std::string problem;
  std::optional<operator_logic::OperatorModeSeeds> operator_mode_seeds;
  std::shared_ptr<const OperatorMode> operator_mode;  // from the seeds above
  std::string operator_mode_problem;
  // The decoded values; operator_mode follows from keys and the seeds.
  bool operator==(const CalloutSecret& o) const {
    return keys == o.keys && problem == o.problem && operator_mode_seeds == o.operator_mode_seeds &&
           operator_mode_problem == o.operator_mode_problem;
  }
};
CalloutSecret CalloutSecretOf(const nlohmann::json& secret);
using CalloutLookup =
    std::function<std::shared_ptr<const CalloutSecret>(std::string_view ns, std::string_view name)>;

// `server` must be in AuthCallout mode (kFailedPrecondition otherwise).
// kFailedPrecondition naming what is missing when the callout Secret is
// absent or does not decode (the operator has not written it yet);
// CollectDirectory's error when the server's fields do not parse. Errors
// never carry a Secret's value. `records` as the authorizer's cache keeps
// them (installations.h), any order; the Directory is
// operator_logic::CollectDirectory over them.
Result<ServedServer> BuildServedServer(
    const nlohmann::json& server,
    const std::vector<std::shared_ptr<const operator_logic::InstallationRecord>>& records,
    const CalloutLookup& callout);

// The same from the objects as the API server shows them (tests; what the
// cache must agree with).
Result<ServedServer> BuildServedServer(const nlohmann::json& server,
                                       const std::vector<const nlohmann::json*>& backends,
                                       const operator_logic::SecretLookup& secret);

// Whether the authorizer serves `server`: in AuthCallout mode and, when
// `only` is not empty, named there as "ns/name".
bool Selected(const nlohmann::json& server, const std::vector<std::string>& only);

// Whether `after` accepts less than `before`: a user or one of its
// password generations is gone, or a password got (or moved up) its
// `until`. Decides only when to sweep early; which connections close is
// operator_logic::ConnectionsToClose's answer.
bool NarrowsAccess(const operator_logic::Directory& before, const operator_logic::Directory& after);

// The earliest `until` of any accepted password in `directory` after
// `now`: when a retiring password's connections must go.
std::optional<operator_logic::Time> NextRetirement(const operator_logic::Directory& directory,
                                                   operator_logic::Time now);

}  // namespace switchboard::authorizer
