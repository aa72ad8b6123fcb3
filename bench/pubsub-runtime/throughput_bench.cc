// End-to-end throughput of Hatchet messages with a 256-byte payload, one
// publisher and one subscriber (separate connections) on loopback, side by
// side with raw nats.c publishing the same encoded bytes to a raw
// subscriber. Rounds alternate so machine noise hits both alike; the ratio
// of the medians is the figure to compare.
//
//   bench_pubsub_throughput [messages per round, default 200000] [rounds, default 5]
#include <nats/nats.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/testing/nats_server.h"

namespace ps = switchboard::pubsub;
using Clock = std::chrono::steady_clock;

// This process's CPU time (publisher, subscriber and nats.c threads; the
// server is a separate process). Robust against a noisy shared machine,
// unlike wall-clock throughput.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Result {
  double msgs_per_s;
  double cpu_us_per_msg;
};

namespace {

ps::Message BenchMessage() {
  ps::Message m;
  m.id = "task-stream-event";
  m.tenant_id = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  m.payloads = std::vector<std::string>{std::string(256, 'x')};
  return m;
}

bool WaitCount(const std::atomic<int64_t>& n, int64_t want, Clock::time_point deadline) {
  while (n.load(std::memory_order_relaxed) < want) {
    if (Clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Messages per second from the first publish until the subscriber has all.
Result RunHatchet(const std::string& url, int64_t count) {
  ps::NatsOptions o;
  o.urls = url;
  auto pub = ps::NatsPubSub::Connect(o);
  auto sub_conn = ps::NatsPubSub::Connect(o);
  if (!pub.ok() || !sub_conn.ok()) std::abort();
  auto topic = *ps::Topic::TenantStream("8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
  std::atomic<int64_t> received{0};
  auto sub = (*sub_conn)->Subscribe(topic, [&](const ps::Message&) {
    received.fetch_add(1, std::memory_order_relaxed);
    return switchboard::Status::Ok();
  });
  if (!sub.ok()) std::abort();
  ps::Message m = BenchMessage();
  double cpu0 = CpuSeconds();
  auto start = Clock::now();
  for (int64_t i = 0; i < count; ++i) {
    if (!(*pub)->Publish(topic, m).ok()) std::abort();
  }
  if (!WaitCount(received, count, start + std::chrono::seconds(60))) {
    std::fprintf(stderr, "hatchet: received %lld of %lld\n",
                 static_cast<long long>(received.load()), static_cast<long long>(count));
  }
  std::chrono::duration<double> took = Clock::now() - start;
  double cpu = CpuSeconds() - cpu0;
  return {static_cast<double>(received.load()) / took.count(),
          cpu * 1e6 / static_cast<double>(count)};
}

void OnRaw(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  static_cast<std::atomic<int64_t>*>(closure)->fetch_add(1, std::memory_order_relaxed);
  natsMsg_Destroy(msg);
}

Result RunRaw(const std::string& url, int64_t count) {
  natsConnection *pub = nullptr, *subc = nullptr;
  if (natsConnection_ConnectTo(&pub, url.c_str()) != NATS_OK) std::abort();
  if (natsConnection_ConnectTo(&subc, url.c_str()) != NATS_OK) std::abort();
  std::string subject = "hatchet.pubsub.8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d_v1";
  std::atomic<int64_t> received{0};
  natsSubscription* sub = nullptr;
  natsConnection_Subscribe(&sub, subc, subject.c_str(), OnRaw, &received);
  natsSubscription_SetPendingLimits(sub, 512 * 1024, 256 * 1024 * 1024);
  natsConnection_Flush(subc);
  std::string body = ps::EncodeMessage(BenchMessage());
  double cpu0 = CpuSeconds();
  auto start = Clock::now();
  for (int64_t i = 0; i < count; ++i) {
    natsConnection_Publish(pub, subject.c_str(), body.data(), static_cast<int>(body.size()));
  }
  if (!WaitCount(received, count, start + std::chrono::seconds(60))) {
    std::fprintf(stderr, "raw: received %lld of %lld\n", static_cast<long long>(received.load()),
                 static_cast<long long>(count));
  }
  std::chrono::duration<double> took = Clock::now() - start;
  double cpu = CpuSeconds() - cpu0;
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(pub);
  natsConnection_Destroy(subc);
  return {static_cast<double>(received.load()) / took.count(),
          cpu * 1e6 / static_cast<double>(count)};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t count = argc > 1 ? std::atoll(argv[1]) : 200000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  switchboard::testing::NatsServer server;
  if (!server.ok()) {
    std::fprintf(stderr, "nats-server did not start\n");
    return 1;
  }
  std::printf("wire size: %zu bytes per message (256-byte payload)\n",
              ps::EncodeMessage(BenchMessage()).size());
  std::vector<double> raw, hatchet, raw_cpu, hatchet_cpu;
  RunRaw(server.url(), count / 4);  // warm-up
  for (int r = 0; r < rounds; ++r) {
    Result a = RunRaw(server.url(), count);
    Result b = RunHatchet(server.url(), count);
    raw.push_back(a.msgs_per_s);
    hatchet.push_back(b.msgs_per_s);
    raw_cpu.push_back(a.cpu_us_per_msg);
    hatchet_cpu.push_back(b.cpu_us_per_msg);
    std::printf(
        "round %d: raw nats.c %.0f msg/s (%.2f us CPU/msg), hatchet %.0f msg/s (%.2f us CPU/msg)\n",
        r + 1, a.msgs_per_s, a.cpu_us_per_msg, b.msgs_per_s, b.cpu_us_per_msg);
  }
  double mr = Median(raw), mh = Median(hatchet);
  double cr = Median(raw_cpu), ch = Median(hatchet_cpu);
  std::printf("median throughput: raw nats.c %.0f msg/s, hatchet %.0f msg/s, ratio %.2f\n", mr, mh,
              mh / mr);
  std::printf(
      "median CPU per message (client process): raw %.2f us, hatchet %.2f us, efficiency ratio "
      "%.2f\n",
      cr, ch, cr / ch);
  return 0;
}
