// The admission decision: an AdmissionReview (admission.k8s.io/v1, or
// v1beta1, whose shape is the same) in, an AdmissionReview with a response
// out. Pure: no I/O, no clocks, no globals; the existing objects come from a
// ContextSource. Never throws and never crashes on any input: malformed
// requests get a response whose status message says what is wrong.
//
// Handled: CREATE and UPDATE of pubsub.switchboard.dev PubSubBackend and
// NatsServer. DELETE and CONNECT, and the status subresource, are allowed
// untouched (nothing to check). Any other kind is refused with a message
// that points at the webhook configuration's rules.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/webhook_admission/context_source.h"

namespace switchboard::webhook_admission {

enum class Webhook {
  // Runs the rule set: allowed or denied, plus warnings. Refuses to judge
  // (503) until the ContextSource has synced.
  kValidating,
  // Fills in defaults (JSON Patch), and denies what the rule set rejects:
  // the API server checks the CRD schema after mutating and before
  // validating admission, and without this its generic message would
  // pre-empt the rule set's. No warnings (the validating webhook gives them).
  kMutating,
};

// Deeper JSON than this is refused before parsing (Kubernetes objects are a
// few levels deep; unbounded depth would exhaust the stack in recursive code).
inline constexpr int kMaxJsonDepth = 64;

struct Outcome {
  // HTTP status to answer with: 200 whenever the request was an
  // AdmissionReview with a uid (even when denied), 400 otherwise.
  int http_status = 200;
  // The AdmissionReview JSON to send back (always a JSON object).
  std::string body;

  // For metrics and logs. kind is "PubSubBackend", "NatsServer" or "other";
  // operation is "CREATE", "UPDATE", "DELETE", "CONNECT" or "other";
  // result is "allowed", "denied" or "error" (the request itself was bad or
  // could not be judged).
  std::string kind = "other";
  std::string operation = "other";
  std::string result = "error";
  std::string uid;
  std::string namespace_;
  std::string name;
  std::string message;  // the status message when not allowed
  int warnings = 0;
  bool patched = false;
};

// Decides one review. `body` is the raw HTTP request body.
Outcome Review(std::string_view body, Webhook webhook, const ContextSource& context);

}  // namespace switchboard::webhook_admission
