#include "switchboard/authorizer/answer.h"

#include <chrono>

#include "switchboard/natsauth/jwt.h"

namespace switchboard::authorizer {

namespace logic = operator_logic;

Result<std::string> ConfigModeSigner::Sign(natsauth::UserClaims user,
                                           const logic::AuthorizationDecision& decision) const {
  user.claims.audience = decision.account;
  return natsauth::EncodeUserClaims(user, issuer_);
}

Result<std::string> OperatorModeSigner::Sign(natsauth::UserClaims user,
                                             const logic::AuthorizationDecision& decision) const {
  std::string account = account_of_ ? account_of_(decision) : decision.account;
  if (!natsauth::IsPublicKey(account, natsauth::KeyType::kAccount)) {
    return Status::FailedPrecondition("installation " + decision.ns + "/" + decision.name +
                                      " has no NATS account key yet");
  }
  user.issuer_account = std::move(account);
  return natsauth::EncodeUserClaims(user, signing_key_);
}

Answer AnswerRequest(std::string_view token, const logic::Directory& directory,
                     const natsauth::KeyPair& issuer, logic::Time now,
                     const logic::CredentialDeps& deps) {
  return AnswerRequest(token, directory, issuer, ConfigModeSigner(issuer), now, deps);
}

Answer AnswerRequest(std::string_view token, const logic::Directory& directory,
                     const natsauth::KeyPair& issuer, const UserJwtSigner& signer, logic::Time now,
                     const logic::CredentialDeps& deps) {
  Answer answer;
  const int64_t unix_now =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  auto request = natsauth::DecodeAuthorizationRequest(token, unix_now, issuer.public_key());
  if (!request.ok()) {
    answer.result = kResultInvalid;
    answer.reason = kReasonInvalidRequest;
    answer.message = request.status().message();
    return answer;
  }
  answer.user = request->connect_opts.user;
  logic::AuthorizationDecision decision = logic::DecideAuthorization(
      directory, request->connect_opts.user, request->connect_opts.pass, now, deps);

  natsauth::AuthorizationResponseClaims response;
  response.claims = {
      .audience = request->server_id.id, .issued_at = unix_now, .subject = request->user_nkey};
  if (decision.denial == logic::Denial::kNone) {
    natsauth::UserClaims user;
    // No expiry: the server would disconnect the engine at exp. A retired
    // password's connections are closed by the sweep instead.
    user.claims = {
        .issued_at = unix_now, .name = decision.connection_name, .subject = request->user_nkey};
    user.pub.allow = decision.allow;
    user.sub.allow = decision.allow;
    auto jwt = signer.Sign(std::move(user), decision);
    if (!jwt.ok()) {
      // Still answered, so the client is refused at once, not at the timeout.
      answer.result = kResultDenied;
      answer.reason = kReasonSigningFailed;
      answer.message = "cannot sign the user JWT: " + jwt.status().message();
      response.error = answer.message;
    } else {
      answer.result = kResultAllowed;
      answer.reason = kReasonAllowed;
      answer.message = decision.message;
      response.jwt = std::move(jwt).value();
    }
  } else {
    answer.result = kResultDenied;
    answer.reason = std::string(logic::DenialReason(decision.denial));
    answer.message = decision.message;
    response.error = decision.message.empty() ? answer.reason : decision.message;
  }
  auto reply = natsauth::EncodeAuthorizationResponse(response, issuer);
  if (!reply.ok()) {
    answer.result = kResultInvalid;
    answer.reason = kReasonSigningFailed;
    answer.message = "cannot sign the authorization response: " + reply.status().message();
    return answer;
  }
  answer.reply = std::move(reply).value();
  return answer;
}

}  // namespace switchboard::authorizer
