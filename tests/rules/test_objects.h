// The valid objects the rule tests start from, each then broken in exactly
// one place: the shared builders (tests/support objects.h) with the values
// the rule cases are written against.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "switchboard/testing/objects.h"

namespace switchboard::rules::testing {

inline nlohmann::json Backend(const std::string& ns = "team-a", const std::string& name = "hatchet",
                              const std::string& prefix = "hatchet.team-a") {
  return switchboard::testing::BackendBuilder(ns, name).Prefix(prefix).Json();
}

inline nlohmann::json Server(const std::string& ns = "nats", const std::string& name = "shared") {
  return switchboard::testing::ServerBuilder(ns, name)
      .Url("nats://nats-0.nats.nats.svc:4222,nats://nats-1.nats.nats.svc:4222")
      .AllowAll()
      .Json();
}

}  // namespace switchboard::rules::testing
