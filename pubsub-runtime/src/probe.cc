#include "switchboard/pubsub/probe.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>

#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub {
namespace {

constexpr const char* kProbeMessageId = "switchboard-probe";

std::string Nonce() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(gen()));
  return buf;
}

// What the callbacks report; the probe thread waits on it.
struct Outcome {
  std::mutex mu;
  std::condition_variable cv;
  bool received = false;              // guarded by mu
  std::optional<Status> async_error;  // guarded by mu: first permission violation
};

}  // namespace

Result<ProbeReport> Probe(const ProbeOptions& options) {
  if (options.urls.empty()) {
    return Status::InvalidArgument(
        "urls: at least one NATS URL is required, e.g. nats://nats:4222");
  }
  if (options.timeout.count() <= 0) return Status::InvalidArgument("timeout: must be positive");
  auto outcome = std::make_shared<Outcome>();

  NatsOptions n;
  n.urls = options.urls;
  n.username = options.username;
  n.password = options.password;
  n.subject_prefix =
      options.subject_prefix.empty() ? kDefaultSubjectPrefix : options.subject_prefix;
  n.ca_file = options.ca_file;
  n.name = "switchboard-probe";
  n.connect_timeout = options.timeout;
  n.on_error = [outcome](const Status& s) {
    if (s.code() != StatusCode::kPermissionDenied) return;
    std::lock_guard lock(outcome->mu);
    if (!outcome->async_error) outcome->async_error = s;
    outcome->cv.notify_all();
  };
  auto connected = NatsPubSub::Connect(n);
  if (!connected.ok()) return connected.status();
  auto& ps = **connected;

  ProbeReport report;
  report.server_max_payload = ps.MaxPayload();
  report.connected_url = ps.ConnectedUrl();

  auto topic = Topic::FromName(kProbeTopicName);
  if (!topic.ok()) return topic.status();
  const std::string nonce = Nonce();
  auto sub = ps.Subscribe(*topic, [outcome, nonce](const Message& m) {
    if (m.id != kProbeMessageId || m.PayloadCount() != 1 ||
        (*m.payloads)[0].find(nonce) == std::string::npos) {
      return Status::Ok();  // another probe's message
    }
    std::lock_guard lock(outcome->mu);
    outcome->received = true;
    outcome->cv.notify_all();
    return Status::Ok();
  });
  if (!sub.ok()) return sub.status();

  Message m;
  m.id = kProbeMessageId;
  m.payloads = std::vector<std::string>{"{\"nonce\":\"" + nonce + "\"}"};
  auto start = std::chrono::steady_clock::now();
  if (Status s = ps.Publish(*topic, m); !s.ok()) return s;

  std::unique_lock lock(outcome->mu);
  outcome->cv.wait_until(lock, start + options.timeout,
                         [&] { return outcome->received || outcome->async_error.has_value(); });
  if (outcome->async_error) return *outcome->async_error;
  if (!outcome->received) {
    return Status::Timeout("probe message on " + n.subject_prefix + "." + kProbeTopicName +
                           " did not come back within " + std::to_string(options.timeout.count()) +
                           " ms");
  }
  report.round_trip = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  return report;
}

}  // namespace switchboard::pubsub
