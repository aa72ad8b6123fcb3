// NATS operator mode on real servers, for the controller's integration
// tests: three routed nats-server-callout (2.15, tools cache) on the config
// RenderOperatorModeConfig writes, each with its own full resolver store,
// the keys as the operator generates them into the callout Secret, and the
// operator's system-account connection (OperatorModeSystemConnection).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "operator_mode_connection.h"
#include "switchboard/authorizer/operator_mode.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/testing/callout_config.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/tool_path.h"

namespace switchboard::operator_controller {

struct OperatorModeNats {
  std::unique_ptr<testing::NatsCluster> cluster;
  std::shared_ptr<const authorizer::OperatorMode> mode;  // keys and the authorizer's signer
  pubsub::NatsOptions system_options;                    // the system account's user

  // Server i's resolver store.
  std::string StoreOf(int i) const {
    return cluster->dir() + "/resolver-" + cluster->server_name(i);
  }
};

inline int64_t UnixNow() { return static_cast<int64_t>(std::time(nullptr)); }

// Starts it all into `out`; a failed step fails the calling test (call it
// under ASSERT_NO_FATAL_FAILURE). A missing tool is a failure, not a skip.
inline void StartOperatorModeNats(OperatorModeNats& out) {
  namespace logic = ::switchboard::operator_logic;
  const std::string binary = switchboard::testing::ToolPath("nats-server-callout");
  ASSERT_EQ(access(binary.c_str(), X_OK), 0)
      << binary << " is missing: build it with `bash scripts/build-tools.sh "
      << "nats-server-callout` (make test does, through make tools)";
  out.cluster =
      std::make_unique<testing::NatsCluster>(testing::NatsCluster::Options{.binary = binary});
  auto seeds = logic::PlanOperatorModeSeeds(std::nullopt, UnixNow());
  ASSERT_TRUE(seeds.ok()) << seeds.status().ToString();
  auto issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
  ASSERT_TRUE(issuer.ok());
  auto mode = authorizer::OperatorModeOf(seeds->seeds, issuer->Seed());
  ASSERT_TRUE(mode.ok()) << mode.status().ToString();
  out.mode = *mode;
  const logic::OperatorModeKeyPairs& keys = out.mode->keys;

  std::vector<std::string> bodies;
  for (int i = 0; i < out.cluster->size(); ++i) {
    auto body = testing::OperatorModeConfig(keys, out.StoreOf(i), UnixNow());
    ASSERT_TRUE(body.ok()) << body.status().ToString();
    bodies.push_back(*body);
  }
  ASSERT_TRUE(out.cluster->Start(bodies)) << out.cluster->error();

  auto options = OperatorModeSystemConnection(out.cluster->urls(), "", keys, UnixNow());
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  out.system_options = *options;
}

}  // namespace switchboard::operator_controller
