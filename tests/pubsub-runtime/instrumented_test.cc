// The instrumentation decorator over a real NATS connection: Hatchet's
// histogram names, labels and buckets, published_at stamped on a copy.
#include "switchboard/pubsub/instrumented.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "nats_test_util.h"
#include "switchboard/testing/nats_server.h"

namespace switchboard::pubsub {
namespace {

using testutil::Collector;

const prometheus::MetricFamily* Find(const std::vector<prometheus::MetricFamily>& fams,
                                     const std::string& name) {
  for (const auto& f : fams) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::map<std::string, std::string> Labels(const prometheus::ClientMetric& m) {
  std::map<std::string, std::string> out;
  for (const auto& l : m.label) out[l.name] = l.value;
  return out;
}

uint64_t Count(const prometheus::MetricFamily& f,
               const std::map<std::string, std::string>& labels) {
  for (const auto& m : f.metric) {
    if (Labels(m) == labels) return m.histogram.sample_count;
  }
  return 0;
}

TEST(InstrumentedTest, RecordsHatchetHistogramsAndStampsACopy) {
  testing::NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto inner = NatsPubSub::Connect(testutil::Options(server.url()));
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  prometheus::Registry registry;
  auto ps = Instrument(std::move(inner).value(), registry);

  auto tenant = *Topic::TenantStream("8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
  auto sched = *Topic::SchedulerPartition("p1");
  Collector ct, cs;
  auto st = ps->Subscribe(tenant, ct.handler());
  auto ss = ps->Subscribe(sched, cs.handler());
  ASSERT_TRUE(st.ok() && ss.ok());

  Message m;
  m.id = "x";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ps->Publish(tenant, m).ok());
  ASSERT_TRUE(ps->Publish(sched, m).ok());
  EXPECT_TRUE(m.published_at.IsZero()) << "the caller's message is never modified";
  ASSERT_TRUE(ct.WaitFor(3));
  ASSERT_TRUE(cs.WaitFor(1));
  auto now = std::chrono::system_clock::now();
  for (const auto& got : ct.messages()) {
    ASSERT_FALSE(got.published_at.IsZero()) << "published_at travels on the wire";
    EXPECT_LE(got.published_at.ToSystemClock(), now);
  }

  auto fams = registry.Collect();
  const auto* publish = Find(fams, "hatchet_pubsub_publish_duration_seconds");
  const auto* transit = Find(fams, "hatchet_pubsub_transit_seconds");
  ASSERT_NE(publish, nullptr);
  ASSERT_NE(transit, nullptr);
  EXPECT_EQ(publish->type, prometheus::MetricType::Histogram);
  EXPECT_EQ(
      Count(*publish, {{"kind", "nats"}, {"topic_kind", "tenant-stream"}, {"result", "success"}}),
      3u);
  EXPECT_EQ(Count(*publish,
                  {{"kind", "nats"}, {"topic_kind", "scheduler-partition"}, {"result", "success"}}),
            1u);
  EXPECT_EQ(Count(*transit, {{"kind", "nats"}, {"topic_kind", "tenant-stream"}}), 3u);
  EXPECT_EQ(Count(*transit, {{"kind", "nats"}, {"topic_kind", "scheduler-partition"}}), 1u);

  const std::vector<double> want = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                    0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
  const auto& buckets = publish->metric[0].histogram.bucket;
  ASSERT_EQ(buckets.size(), want.size() + 1) << "14 bounds plus +Inf";
  for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(buckets[i].upper_bound, want[i]);
}

TEST(InstrumentedTest, FailedPublishIsCountedAsError) {
  testing::NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto opts = testutil::Options(server.url());
  opts.compression = false;
  auto inner = NatsPubSub::Connect(opts);
  ASSERT_TRUE(inner.ok());
  prometheus::Registry registry;
  auto ps = Instrument(std::move(inner).value(), registry);
  Message m;
  m.payloads = std::vector<std::string>{std::string(13u << 20, 'x')};  // one payload over 16 MiB
  EXPECT_FALSE(ps->Publish(*Topic::FromName("t_v1"), m).ok());
  auto fams = registry.Collect();
  const auto* publish = Find(fams, "hatchet_pubsub_publish_duration_seconds");
  ASSERT_NE(publish, nullptr);
  EXPECT_EQ(
      Count(*publish, {{"kind", "nats"}, {"topic_kind", "tenant-stream"}, {"result", "error"}}),
      1u);
}

}  // namespace
}  // namespace switchboard::pubsub
