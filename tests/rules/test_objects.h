// Builders for the objects the rule tests judge: a valid object of each kind
// that a test then breaks in exactly one place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace switchboard::rules::testing {

inline nlohmann::json Backend(const std::string& ns = "team-a", const std::string& name = "hatchet",
                              const std::string& prefix = "hatchet.team-a") {
  return nlohmann::json{{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
                        {"kind", "PubSubBackend"},
                        {"metadata", {{"name", name}, {"namespace", ns}}},
                        {"spec",
                         {{"kind", "nats"},
                          {"nats",
                           {{"serverRef", {{"name", "shared"}, {"namespace", "nats"}}},
                            {"subjectPrefix", prefix}}}}}};
}

inline nlohmann::json Server(const std::string& ns = "nats", const std::string& name = "shared") {
  return nlohmann::json{
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "NatsServer"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"url", "nats://nats-0.nats.nats.svc:4222,nats://nats-1.nats.nats.svc:4222"},
        {"allowedNamespaces", {{"from", "All"}}}}}};
}

}  // namespace switchboard::rules::testing
