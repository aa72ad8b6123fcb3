// One auth callout request in, one authorization response out: the pure
// step between the NATS subscription and the reply (no I/O, no clock).
// The decision is operator_logic::DecideAuthorization's; this only decodes
// the request, shapes the user JWT and signs the response.
#pragma once

#include <string>
#include <string_view>

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

// Decodes `token` (expected subject: the issuer's public key; times from
// `now`), decides against `directory` and answers: a user JWT (aud the
// decision's account, name its connection_name, pub and sub allow its
// allow-list, no expiry, limits unset) inside a response signed by
// `issuer`, or a response carrying the denial's message, which the server
// logs before it refuses the client at once.
Answer AnswerRequest(std::string_view token, const operator_logic::Directory& directory,
                     const natsauth::KeyPair& issuer, operator_logic::Time now,
                     const operator_logic::CredentialDeps& deps = {});

}  // namespace switchboard::authorizer
