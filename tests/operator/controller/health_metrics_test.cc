#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>

#include "cache_shapes.h"
#include "ready_gauge.h"
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

TEST(Metrics, IncludeFileSizeByServerAndForgotten) {
  Metrics m;
  m.SetConfigBytes("nats", "shared", 1000, 1048576);
  m.SetConfigBytes("nats", "other", 5, 1048576);
  std::string t = m.Text();
  EXPECT_NE(t.find(R"(switchboard_natsserver_config_bytes{name="shared",namespace="nats"} 1000)"),
            std::string::npos)
      << t;
  EXPECT_NE(
      t.find(R"(switchboard_natsserver_config_max_bytes{name="shared",namespace="nats"} 1048576)"),
      std::string::npos)
      << t;
  m.ForgetConfigBytes("nats", "shared");
  m.ForgetConfigBytes("nats", "never-set");  // harmless
  t = m.Text();
  EXPECT_EQ(t.find(R"(name="shared")"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(switchboard_natsserver_config_bytes{name="other",namespace="nats"} 5)"),
            std::string::npos)
      << t;
}

// A backend as the operator's cache holds it (status packed).
kube::ObjectPtr CachedBackend(const std::string& name, const char* ready, const char* reason) {
  nlohmann::json o = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
                      {"kind", "PubSubBackend"},
                      {"metadata", {{"name", name}, {"namespace", "team-a"}}},
                      {"spec", {{"kind", "nats"}}}};
  if (ready) {
    o["status"] = {{"conditions", {{{"type", "Ready"}, {"status", ready}, {"reason", reason}}}}};
  }
  CompactCustomObject(o);
  return std::make_shared<const nlohmann::json>(std::move(o));
}

TEST(ReadyGauge, BackendsByReadyReasonFollowTheCache) {
  Metrics m;
  ReadyGauge gauge(&m);
  kube::StoreEventHandler h = gauge.Handler();
  auto series = [&](const std::string& ready, const std::string& reason) {
    const std::string t = m.Text();
    const std::string head =
        "switchboard_pubsubbackends{ready=\"" + ready + "\",reason=\"" + reason + "\"} ";
    auto at = t.find(head);
    if (at == std::string::npos) return std::string("absent");
    return t.substr(at + head.size(), t.find('\n', at) - at - head.size());
  };
  auto a0 = CachedBackend("a", nullptr, nullptr);
  h.on_add(a0);
  EXPECT_EQ(series("Unknown", "NotReconciled"), "1");
  auto a1 = CachedBackend("a", "False", "AuthFailed");
  h.on_update(a0, a1);
  auto b = CachedBackend("b", "True", "Probed");
  h.on_add(b);
  EXPECT_EQ(series("Unknown", "NotReconciled"), "0");
  EXPECT_EQ(series("False", "AuthFailed"), "1");
  EXPECT_EQ(series("True", "Probed"), "1");
  auto a2 = CachedBackend("a", "True", "Probed");
  h.on_update(a1, a2);
  EXPECT_EQ(series("False", "AuthFailed"), "0");
  EXPECT_EQ(series("True", "Probed"), "2");
  h.on_delete(b);
  EXPECT_EQ(series("True", "Probed"), "1");
  const std::string t = m.Text();
  EXPECT_EQ(t.find("team-a"), std::string::npos) << "no per-installation label: " << t;
}

TEST(Metrics, BadAddressIsAnError) {
  Metrics m;
  EXPECT_FALSE(m.Serve("nope").ok());
}

}  // namespace
}  // namespace switchboard::operator_controller
