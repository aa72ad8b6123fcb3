// libFuzzer target for the admission handler: arbitrary bytes as the body
// of POST /validate and /mutate. Properties checked beyond "no crash, no
// sanitizer report": every answer is a JSON AdmissionReview; an answer with
// HTTP 200 echoes the request's uid; a patch only comes with allowed=true.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "switchboard/webhook_admission/admission.h"

namespace {

using switchboard::webhook_admission::Outcome;
using switchboard::webhook_admission::Review;
using switchboard::webhook_admission::StaticContextSource;
using switchboard::webhook_admission::Webhook;

// Existing objects, so the cross-object rules run too.
const StaticContextSource& Context() {
  static const StaticContextSource* source = [] {
    switchboard::rules::Context c;
    c.servers.push_back(nlohmann::json::parse(R"({"apiVersion":"pubsub.switchboard.dev/v1alpha1",
      "kind":"NatsServer","metadata":{"namespace":"team-a","name":"shared"},
      "spec":{"url":"nats://nats:4222","allowedNamespaces":{"from":"All"}}})"));
    c.backends.push_back(nlohmann::json::parse(R"({"apiVersion":"pubsub.switchboard.dev/v1alpha1",
      "kind":"PubSubBackend","metadata":{"namespace":"team-a","name":"one"},
      "spec":{"kind":"nats","nats":{"serverRef":{"name":"shared"},"subjectPrefix":"hatchet.a"}}})"));
    return new StaticContextSource(std::move(c));
  }();
  return *source;
}

void Check(std::string_view body, Webhook webhook) {
  Outcome out = Review(body, webhook, Context());
  nlohmann::json answer = nlohmann::json::parse(out.body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() || !answer.contains("response")) std::abort();
  const nlohmann::json& response = answer["response"];
  if (out.http_status == 200) {
    nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
    if (request["request"]["uid"] != response["uid"]) std::abort();
  }
  if (response.contains("patch") && response["allowed"] != true) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  Check(body, Webhook::kValidating);
  Check(body, Webhook::kMutating);
  return 0;
}
