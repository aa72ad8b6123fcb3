#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>

#include "switchboard/operator_controller/health_server.h"
#include "switchboard/operator_controller/metrics.h"
#include "switchboard/testing/net.h"

namespace switchboard::operator_controller {
namespace {

TEST(HealthServer, HealthzAlwaysReadyzFollowsCallback) {
  std::atomic<bool> synced{false};
  HealthServer server([&]() -> std::string { return synced ? "" : "caches not synced"; });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  auto h = client.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto r = client.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("caches not synced"), std::string::npos);
  synced = true;
  r = client.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  server.Stop();
}

TEST(HealthServer, DisabledAddressServesNothing) {
  HealthServer server(nullptr);
  EXPECT_TRUE(server.Start("0").ok());
  EXPECT_EQ(server.port(), -1);
}

TEST(Metrics, ServedOverHttp) {
  Metrics m;
  m.ObserveReconcile("PubSubBackend", "success", 0.01);
  m.ObserveReconcile("PubSubBackend", "error", 0.02);
  m.SetQueueDepth("PubSubBackend", 3);
  m.ObserveProbe("AuthFailed");
  m.SetLeader(true);
  int port = testing::FreePort();
  ASSERT_TRUE(m.Serve("127.0.0.1:" + std::to_string(port)).ok());
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4");
  EXPECT_EQ(res->body, m.Text()) << "one serializer behind every /metrics";
  const std::string& t = res->body;
  EXPECT_NE(t.find(R"(switchboard_reconcile_total{kind="PubSubBackend",result="success"} 1)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(R"(switchboard_reconcile_duration_seconds_count{kind="PubSubBackend"} 2)"),
            std::string::npos);
  EXPECT_NE(t.find(R"(switchboard_workqueue_depth{kind="PubSubBackend"} 3)"), std::string::npos);
  EXPECT_NE(t.find(R"(switchboard_probe_total{result="AuthFailed"} 1)"), std::string::npos);
  EXPECT_NE(t.find("switchboard_leader 1"), std::string::npos);
}

TEST(Metrics, BadAddressIsAnError) {
  Metrics m;
  EXPECT_FALSE(m.Serve("nope").ok());
}

}  // namespace
}  // namespace switchboard::operator_controller
