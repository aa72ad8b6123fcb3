// One auth callout request in, one authorization response out: the pure
// step between the NATS subscription and the reply (no I/O, no clock).
// The decision is operator_logic::DecideAuthorization's; this only decodes
// the request, shapes the user JWT and signs the response.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::authorizer {

// Metric label values of `Answer::result`.
inline constexpr std::string_view kResultAllowed = "allowed";
inline constexpr std::string_view kResultDenied = "denied";
inline constexpr std::string_view kResultInvalid = "invalid";  // no response can be made
// `Answer::reason` when there is no Denial: allowed, or the request itself.
inline constexpr std::string_view kReasonAllowed = "Allowed";
inline constexpr std::string_view kReasonInvalidRequest = "InvalidRequest";
inline constexpr std::string_view kReasonSigningFailed = "SigningFailed";

struct Answer {
  // The authorization response to publish on the request's reply subject;
  // empty when none can be made (the request did not decode: there is no
  // user key to answer for, and the server times the connection out).
  std::string reply;
  std::string result;   // kResult*
  std::string reason;   // kReasonAllowed, operator_logic::DenialReason, kReasonInvalidRequest ...
  std::string user;     // the CONNECT's user name ("" when the request did not decode)
  std::string message;  // for the log; never a password
};

// Places and signs an allowed user's JWT: the one step that differs between
// a server with auth_callout in its config and one in NATS operator mode.
// `user` arrives with subject, name, permissions and iat set. Immutable, so
// one signer may serve many threads.
class UserJwtSigner {
 public:
  virtual ~UserJwtSigner() = default;
  virtual Result<std::string> Sign(natsauth::UserClaims user,
                                   const operator_logic::AuthorizationDecision& decision) const = 0;
};

// Config mode: aud = the decision's account (its name in the config),
// signed by the auth_callout issuer.
class ConfigModeSigner final : public UserJwtSigner {
 public:
  explicit ConfigModeSigner(const natsauth::KeyPair& issuer) : issuer_(issuer) {}
  Result<std::string> Sign(natsauth::UserClaims user,
                           const operator_logic::AuthorizationDecision& decision) const override;

 private:
  const natsauth::KeyPair& issuer_;
};

// Operator mode (isolation: Accounts): issuer_account = the installation's
// account key, signed by the installation signing key every installation's
// account JWT lists, so the server places the user in that account. The
// account key comes from `account_of` (default: the decision's account);
// an empty or non-account key is an error naming the installation.
class OperatorModeSigner final : public UserJwtSigner {
 public:
  using AccountOf = std::function<std::string(const operator_logic::AuthorizationDecision&)>;
  explicit OperatorModeSigner(const natsauth::KeyPair& signing_key, AccountOf account_of = {})
      : signing_key_(signing_key), account_of_(std::move(account_of)) {}
  Result<std::string> Sign(natsauth::UserClaims user,
                           const operator_logic::AuthorizationDecision& decision) const override;

 private:
  const natsauth::KeyPair& signing_key_;
  AccountOf account_of_;
};

// Decodes `token` (expected subject: the issuer's public key; times from
// `now`), decides against `directory` and answers: a user JWT (aud the
// decision's account, name its connection_name, pub and sub allow its
// allow-list, no expiry, limits unset) inside a response signed by
// `issuer`, or a response carrying the denial's message, which the server
// logs before it refuses the client at once.
Answer AnswerRequest(std::string_view token, const operator_logic::Directory& directory,
                     const natsauth::KeyPair& issuer, operator_logic::Time now,
                     const operator_logic::CredentialDeps& deps = {});
// The same with the user JWT placed and signed by `signer`; the response is
// still signed by `issuer` (in operator mode the auth account's key, which
// is also the request's subject). The one above uses ConfigModeSigner.
Answer AnswerRequest(std::string_view token, const operator_logic::Directory& directory,
                     const natsauth::KeyPair& issuer, const UserJwtSigner& signer,
                     operator_logic::Time now, const operator_logic::CredentialDeps& deps = {});

}  // namespace switchboard::authorizer
