// The operator survives an API server restart (scripts/cluster.sh
// restart-apiserver). RUN_SERIAL: every other e2e test would see the outage.
#include <gtest/gtest.h>

#include <cstdlib>

#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

TEST(OperatorE2ESerial, SurvivesAnApiServerRestart) {
  ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
  std::string ns = UniqueName("op-restart");
  CreateNamespace(ns);
  LocalNats nats;
  ASSERT_TRUE(nats.ok());
  testing::Process sync = StartConfigSync(nats, ns, "shared-switchboard");
  OperatorProcess op({ns});
  Apply(NatsServerYaml(ns, "shared", nats.url(), {}));
  Apply(BackendYaml(ns, "before", ns, "shared", "hatchet.before"));
  ASSERT_TRUE(WaitReady(ns, "before")) << op.Log();

  const char* src = std::getenv("SWITCHBOARD_SOURCE_DIR");
  const char* cluster_dir = std::getenv("SWITCHBOARD_CLUSTER_DIR");
  ASSERT_TRUE(src && cluster_dir);
  auto r = testing::Run({"bash", std::string(src) + "/scripts/cluster.sh", "restart-apiserver"},
                        {{"CLUSTER_DIR", cluster_dir}}, "", 120s);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  EXPECT_TRUE(op.process().running());
  EXPECT_TRUE(op.Healthy());
  // Watches resumed: a new object is reconciled.
  Apply(BackendYaml(ns, "after", ns, "shared", "hatchet.after"));
  EXPECT_TRUE(WaitReady(ns, "after", "True", "", 60)) << op.Log();
  EXPECT_EQ(ReadyStatus(Get("psb", ns, "before")), "True");
  DeleteNamespace(ns);
}

}  // namespace
}  // namespace switchboard::e2e
