// `switchboard pubsub bench`: end-to-end Hatchet-message throughput, one
// publisher and one subscriber on one connection each.
#include <atomic>
#include <random>
#include <thread>

#include "common.h"
#include "subcommands.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::cli::pubsub {

namespace ps = switchboard::pubsub;

int RunBench(const std::vector<std::string>& args) {
  flags::FlagSet flags(
      "Usage: switchboard pubsub bench [flags]\n\n"
      "Publishes --count messages of one --size-byte payload to a private topic under the\n"
      "prefix and counts them on a second connection. Reports messages/s published and\n"
      "received (core NATS is at-most-once: a slow subscriber may drop some).\n\n" +
      std::string(ConnectionFlags::EnvHelp()));
  ConnectionFlags conn;
  int64_t count = 100000, size = 256;
  std::chrono::milliseconds timeout{30000};
  conn.Register(&flags);
  flags.Int("count", &count, "messages to publish (default 100000)", 1);
  flags.Int("size", &size, "payload bytes per message (default 256)", 0);
  flags.Duration("timeout", &timeout, "how long to wait for the subscriber (default 30s)");
  if (int rc = ParseOrExit(&flags, args, "bench"); rc >= 0) return rc;
  QuietLogs();
  ps::NatsOptions options = conn.ToOptions();
  auto pub = ps::NatsPubSub::Connect(options);
  if (!pub.ok()) return Fail("bench", pub.status());
  auto subc = ps::NatsPubSub::Connect(options);
  if (!subc.ok()) return Fail("bench", subc.status());

  std::mt19937_64 rng(std::random_device{}());
  auto topic =
      ps::Topic::FromName("switchboard_bench_" + std::to_string(rng() % 1000000000) + "_v1");
  if (!topic.ok()) return Fail("bench", topic.status());
  std::atomic<int64_t> received{0};
  auto sub = (*subc)->Subscribe(*topic, [&](const ps::Message&) {
    received.fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  });
  if (!sub.ok()) return Fail("bench", sub.status());

  ps::Message m;
  m.id = "bench";
  m.payloads = std::vector<std::string>{std::string(static_cast<size_t>(size), 'x')};
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; ++i) {
    if (Status s = (*pub)->Publish(*topic, m); !s.ok()) return Fail("bench", s);
  }
  (void)(*pub)->Flush(timeout);
  auto published = std::chrono::steady_clock::now();
  auto deadline = start + timeout;
  while (received.load() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto done = std::chrono::steady_clock::now();
  std::chrono::duration<double> pub_s = published - start, all_s = done - start;
  int64_t got = received.load();
  std::printf(
      "{\"messages\":%lld,\"payload_bytes\":%lld,\"published_per_s\":%.0f,\"received\":%lld,"
      "\"received_per_s\":%.0f}\n",
      static_cast<long long>(count), static_cast<long long>(size), count / pub_s.count(),
      static_cast<long long>(got), got / all_s.count());
  sub->reset();
  return got == count ? kExitOk : kExitFailure;
}

}  // namespace switchboard::cli::pubsub
