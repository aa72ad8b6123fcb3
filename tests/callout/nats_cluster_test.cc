// testing::NatsCluster against real servers (nats-server-callout from the
// tools cache, the binary the callout e2e runs): three servers route to each
// other, a message crosses the cluster, and a restarted server (new server
// id, same ports) is routed again. A missing tool is a failure, not a skip.
#include "switchboard/testing/nats_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::testing {
namespace {

using namespace std::chrono_literals;

// Publishes on `from` until `to` (on another server) receives it: interest
// crosses a route asynchronously, so the first publishes may find none.
bool Crosses(NatsTestClient& from, NatsTestClient& to, const std::string& subject) {
  return WaitFor([&] { return from.Publish(subject, "hello") && to.Next(100ms) == "hello"; }, 10s,
                 1ms);
}

class NatsClusterTest : public switchboard::testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    binary_ = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(binary_.c_str(), X_OK), 0)
        << binary_
        << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout`";
  }
  std::string binary_;
};

TEST_F(NatsClusterTest, RoutesCarriesMessagesAndRestartsOneServer) {
  NatsCluster cluster({.size = 3, .binary = binary_});
  ASSERT_TRUE(cluster.Start("max_payload: 1048576")) << cluster.error();
  EXPECT_TRUE(cluster.Routed()) << cluster.error();
  EXPECT_EQ(cluster.urls(), cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2));
  for (int i = 0; i < 3; i++) {
    auto varz = cluster.Monitor(i, "varz");
    ASSERT_TRUE(varz.is_object()) << cluster.Log(i);
    EXPECT_EQ(varz.value("server_name", ""), cluster.server_name(i));
    EXPECT_EQ(varz.value("max_payload", 0), 1048576) << "the body is included";
    EXPECT_TRUE(cluster.ConfigLoadTime(i).has_value());
  }

  NatsTestClient on1(cluster.url(0));
  NatsTestClient on3(cluster.url(2));
  ASSERT_TRUE(on1.connected() && on3.connected()) << on1.error() << on3.error();
  ASSERT_TRUE(on3.Subscribe("cluster.test"));
  EXPECT_TRUE(Crosses(on1, on3, "cluster.test"));

  // Server 2 restarts on its ports: a new instance (new id), routed again,
  // and carrying messages to server 3; the others kept their config.
  const std::string old_id = cluster.Monitor(1, "varz").value("server_id", "");
  const auto load0 = cluster.ConfigLoadTime(0);
  cluster.StopServer(1);
  EXPECT_FALSE(cluster.running(1));
  EXPECT_TRUE(cluster.WaitRouted(10s)) << cluster.error() << "\nthe two left route to each other";
  ASSERT_TRUE(cluster.StartServer(1)) << cluster.error() << "\n" << cluster.Log(1);
  auto varz = cluster.Monitor(1, "varz");
  EXPECT_NE(varz.value("server_id", ""), old_id);
  EXPECT_EQ(varz.value("port", 0), cluster.client_port(1));
  EXPECT_EQ(cluster.ConfigLoadTime(0), load0);
  NatsTestClient on2(cluster.url(1));
  ASSERT_TRUE(on2.connected()) << on2.error();
  EXPECT_TRUE(Crosses(on2, on3, "cluster.test"));
  EXPECT_TRUE(Crosses(on1, on3, "cluster.test"));
}

}  // namespace
}  // namespace switchboard::testing
