// Fuzzes the string parsers behind the rules with raw field values: the
// NATS seed list, the subject prefix, quantities, durations and names, each
// placed into an otherwise valid object.
#include <cstdint>
#include <string>

#include "switchboard/api/names.h"
#include "switchboard/api/quantity.h"
#include "switchboard/common/duration.h"
#include "switchboard/rules/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchboard;
  std::string value(reinterpret_cast<const char*>(data), size);
  (void)api::ParseQuantity(std::string_view(value));
  (void)switchboard::ParseDuration(value);
  (void)api::CheckDnsSubdomain(value);
  (void)api::CheckDnsLabel(value);
  (void)api::CheckSecretKey(value);

  nlohmann::json server = {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "NatsServer"},
      {"metadata", {{"name", "s"}, {"namespace", "nats"}}},
      {"spec", {{"url", value}, {"maxPayload", value}, {"maxPending", value}}}};
  nlohmann::json backend = {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "PubSubBackend"},
      {"metadata", {{"name", "b"}, {"namespace", "team-a"}}},
      {"spec",
       {{"kind", "nats"},
        {"nats",
         {{"serverRef", {{"name", "s"}, {"namespace", "nats"}}},
          {"subjectPrefix", value},
          {"credentials", {{"username", value}, {"rotationGracePeriod", value}}}}},
        {"output", {{"secretName", value}}}}}};
  rules::Context context;
  context.servers.push_back(server);
  context.backends.push_back(backend);
  nlohmann::json other = backend;
  other["metadata"]["name"] = "c";
  (void)rules::Validate(server, context);
  (void)rules::Validate(other, context, rules::Operation::kUpdate, &backend);
  return 0;
}
