// `switchboard pubsub sub`: print each message as one JSON line.
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>

#include "common.h"
#include "subcommands.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::cli::pubsub {

namespace ps = switchboard::pubsub;

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void OnSignal(int) { g_interrupted = true; }

}  // namespace

int RunSub(const std::vector<std::string>& args) {
  flags::FlagSet flags(
      "Usage: switchboard pubsub sub (--tenant UUID | --scheduler ID | --topic NAME) [flags]\n\n"
      "Subscribes and prints one JSON object per message on stdout: the wire format as a\n"
      "Go handler sees it (decompressed, \"compressed\" false, payloads base64). Prints\n"
      "\"subscribed to <subject>\" on stderr once the server has accepted the subscription;\n"
      "exits 1 with the server's message when it refused it (permissions violation).\n"
      "Exits 0 after --count messages, or at --timeout when no --count is given; exits 1\n"
      "when --timeout passes before --count messages arrived. SIGINT/SIGTERM end it the\n"
      "same way: exit 0 without --count, 1 when fewer than --count messages arrived.\n\n" +
      std::string(ConnectionFlags::EnvHelp()));
  ConnectionFlags conn;
  TopicFlags topic_flags;
  int64_t count = 0;
  std::chrono::milliseconds timeout{0};
  conn.Register(&flags);
  topic_flags.Register(&flags);
  flags.Int("count", &count, "exit after N messages (default: run until --timeout or Ctrl-C)", 0);
  flags.Duration("timeout", &timeout, "give up after this long (default: no limit)");
  flags.Duration("connect-timeout", &conn.timeout, "connect timeout (default 5s)");
  if (int rc = ParseOrExit(&flags, args, "sub"); rc >= 0) return rc;
  auto topic = topic_flags.Resolve();
  if (!topic.ok()) return Fail("sub", topic.status(), kExitUsage);

  // From here on a signal only sets the flag the wait below checks (before
  // "subscribed to" is printed, so a signal sent on seeing it is caught).
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  QuietLogs();
  ps::NatsOptions options = conn.ToOptions();
  auto client = ps::NatsPubSub::Connect(options);
  if (!client.ok()) return Fail("sub", client.status());

  std::mutex mu;
  std::condition_variable cv;
  int64_t received = 0;  // guarded by mu
  auto sub = (*client)->Subscribe(*topic, [&](const ps::Message& m) {
    std::string line = ps::EncodeMessage(m);
    line.push_back('\n');
    std::lock_guard lock(mu);
    if (count > 0 && received >= count) return Status::Ok();
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    ++received;
    cv.notify_all();
    return Status::Ok();
  });
  if (!sub.ok()) return Fail("sub", sub.status());
  std::fprintf(stderr, "subscribed to %s.%s\n", options.subject_prefix.c_str(),
               topic->name.c_str());
  std::fflush(stderr);

  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mu);
  // Why the loop ended short of --count, if it did.
  const char* cut_short = "";
  while (true) {
    if (count > 0 && received >= count) break;
    if (g_interrupted) {
      cut_short = "interrupted";
      break;
    }
    if (timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
      cut_short = "timed out";
      break;
    }
    // Wake periodically to notice signals (the handler only sets a flag).
    cv.wait_for(lock, std::chrono::milliseconds(100));
  }
  const int64_t got = received;
  lock.unlock();
  // Returns once no handler call runs and none will start: the locals the
  // handler uses stay valid until then. Messages still arriving are
  // dropped and freed.
  sub->reset();
  if (count > 0 && got < count) {
    const std::string what =
        "received " + std::to_string(got) + " of " + std::to_string(count) + " messages";
    if (std::string_view(cut_short) == "timed out") {
      return Fail("sub", Status::Timeout(what + " within the timeout"));
    }
    std::fprintf(stderr, "switchboard pubsub sub: interrupted by a signal: %s\n", what.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace switchboard::cli::pubsub
