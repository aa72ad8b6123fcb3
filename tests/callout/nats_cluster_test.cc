// testing::NatsCluster against real servers (nats-server-callout from the
// tools cache, the binary the callout e2e runs): three servers route to each
// other, a message crosses the cluster, and a restarted server (new server
// id, same ports) is routed again. A missing tool is a failure, not a skip.
#include "switchboard/testing/nats_cluster.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "nats_handles.h"
#include "nats_library.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::testing {
namespace {

using namespace std::chrono_literals;
using pubsub::internal::NatsConnectionPtr;
using pubsub::internal::NatsMsgPtr;
using pubsub::internal::NatsSubscriptionPtr;

NatsConnectionPtr Connect(const std::string& url) {
  natsConnection* nc = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) return nullptr;
  return NatsConnectionPtr(nc);
}

// Publishes on `from` until `sub` (on another server) receives it: interest
// crosses a route asynchronously, so the first publishes may find none.
bool Crosses(natsConnection* from, natsSubscription* sub, const std::string& subject) {
  return WaitFor(
      [&] {
        if (natsConnection_PublishString(from, subject.c_str(), "hello") != NATS_OK ||
            natsConnection_Flush(from) != NATS_OK) {
          return false;
        }
        natsMsg* raw = nullptr;
        if (natsSubscription_NextMsg(&raw, sub, 100) != NATS_OK) return false;
        NatsMsgPtr msg(raw);
        return std::string(natsMsg_GetData(msg.get())) == "hello";
      },
      10s, 1ms);
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

  auto on1 = Connect(cluster.url(0));
  auto on3 = Connect(cluster.url(2));
  ASSERT_TRUE(on1 && on3);
  natsSubscription* raw = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&raw, on3.get(), "cluster.test"), NATS_OK);
  NatsSubscriptionPtr sub(raw);
  ASSERT_EQ(natsConnection_Flush(on3.get()), NATS_OK);
  EXPECT_TRUE(Crosses(on1.get(), sub.get(), "cluster.test"));

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
  auto on2 = Connect(cluster.url(1));
  ASSERT_TRUE(on2);
  EXPECT_TRUE(Crosses(on2.get(), sub.get(), "cluster.test"));
  EXPECT_TRUE(Crosses(on1.get(), sub.get(), "cluster.test"));
}

}  // namespace
}  // namespace switchboard::testing
