// Admission webhook throughput and latency over TLS with keep-alive on
// loopback. Starts the real WebhookServer in-process (the cache is a
// StaticContextSource holding 200 backends on 20 servers, so the
// cross-object rules have work to do), then:
//
//   1. decision only: Review() called in a loop, no network (the floor);
//   2. closed loop: C client threads, each with one keep-alive TLS
//      connection, POST /validate back to back for D seconds
//      -> reviews/s and latency percentiles;
//   3. fixed rate: 1,000 reviews/s scheduled on a clock (latency measured
//      from the scheduled send time, so a stall is not hidden by the
//      client waiting: no coordinated omission) -> p50/p99/p99.9.
//
// Usage: bench_webhook_server [--seconds D] [--connections C] [--rate R] [--threads T]
//        bench_webhook_server --serve PORT    (just serve, for wrk: see run.sh)
// Certificates are made with the openssl command in a temporary folder.
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/log.h"
#include "switchboard/webhook_admission/admission.h"
#include "switchboard/webhook_server/metrics.h"
#include "switchboard/webhook_server/server.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace sb = switchboard;

json Backend(int i) {
  return {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "PubSubBackend"},
      {"metadata",
       {{"namespace", "team-" + std::to_string(i % 20)}, {"name", "hatchet-" + std::to_string(i)}}},
      {"spec",
       {{"kind", "nats"},
        {"nats",
         {{"serverRef", {{"name", "shared-" + std::to_string(i % 20)}, {"namespace", "nats"}}},
          {"subjectPrefix", "hatchet.installation-" + std::to_string(i)}}}}}};
}

json Server(int i) {
  return {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
          {"kind", "NatsServer"},
          {"metadata", {{"namespace", "nats"}, {"name", "shared-" + std::to_string(i)}}},
          {"spec",
           {{"url", "nats://nats-0.nats.nats.svc:4222,nats://nats-1.nats.nats.svc:4222"},
            {"allowedNamespaces", {{"from", "All"}}}}}};
}

// A realistic review as the API server sends it (with managedFields-free
// metadata and userInfo), for a new backend on a busy server.
std::string ReviewBody() {
  json object = Backend(100000);
  object["metadata"]["uid"] = "6f2d1c0e-6a51-4a63-8b2c-0d8e7c1f9a11";
  object["metadata"]["labels"] = {{"app.kubernetes.io/name", "hatchet"}};
  json review = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "0df28fbd-5f5f-4b5b-8e4c-b2f2b8f2c0a1"},
        {"kind",
         {{"group", "pubsub.switchboard.dev"}, {"version", "v1alpha1"}, {"kind", "PubSubBackend"}}},
        {"resource",
         {{"group", "pubsub.switchboard.dev"},
          {"version", "v1alpha1"},
          {"resource", "pubsubbackends"}}},
        {"requestKind",
         {{"group", "pubsub.switchboard.dev"}, {"version", "v1alpha1"}, {"kind", "PubSubBackend"}}},
        {"name", "hatchet-100000"},
        {"namespace", "team-0"},
        {"operation", "CREATE"},
        {"userInfo",
         {{"username", "kubernetes-admin"},
          {"groups", {"system:masters", "system:authenticated"}}}},
        {"object", object},
        {"oldObject", nullptr},
        {"dryRun", false},
        {"options",
         {{"apiVersion", "meta.k8s.io/v1"},
          {"kind", "CreateOptions"},
          {"fieldManager", "kubectl-client-side-apply"}}}}}};
  return review.dump();
}

struct Certs {
  std::string dir, cert, key;
};

Certs MakeCerts() {
  char tmpl[] = "/tmp/bench-webhook-XXXXXX";
  Certs c;
  c.dir = mkdtemp(tmpl);
  c.cert = c.dir + "/tls.crt";
  c.key = c.dir + "/tls.key";
  std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + c.key +
      " -out " + c.cert +
      " -days 1 -subj /CN=bench -addext subjectAltName=IP:127.0.0.1 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "openssl failed\n");
    std::exit(1);
  }
  return c;
}

// CPU seconds this process (server and built-in client together) has used:
// on a shared, noisy machine, CPU per review is steadier than reviews/s.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
double phase_cpu_start = 0;

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

void Report(const char* name, std::vector<double> us, double seconds, long errors) {
  double rate = static_cast<double>(us.size()) / seconds;
  double p50 = Percentile(us, 50), p90 = Percentile(us, 90), p99 = Percentile(us, 99),
         p999 = Percentile(us, 99.9);
  double max = us.empty() ? 0 : *std::max_element(us.begin(), us.end());
  double cpu_us =
      us.empty() ? 0 : (CpuSeconds() - phase_cpu_start) * 1e6 / static_cast<double>(us.size());
  std::printf(
      "%-34s %9.0f reviews/s  p50 %7.0f us  p90 %7.0f us  p99 %7.0f us  p99.9 %7.0f us  max %7.0f "
      "us  cpu %5.1f us/review  errors %ld\n",
      name, rate, p50, p90, p99, p999, max, cpu_us, errors);
  std::fflush(stdout);
}

std::unique_ptr<httplib::SSLClient> Client(int port) {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  c->enable_server_certificate_verification(false);  // loopback bench; tests verify
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);  // as Go clients (the API server) do
  c->set_read_timeout(5);
  return c;
}

void DecisionOnly(const sb::webhook_admission::ContextSource& ctx, const std::string& body,
                  double seconds) {
  phase_cpu_start = CpuSeconds();
  std::vector<double> us;
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  auto start = Clock::now();
  while (Clock::now() < end) {
    auto t0 = Clock::now();
    auto out =
        sb::webhook_admission::Review(body, sb::webhook_admission::Webhook::kValidating, ctx);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (out.result != "allowed") {
      std::fprintf(stderr, "unexpected verdict: %s\n", out.body.c_str());
      std::exit(1);
    }
  }
  Report("decision only (no network)", us,
         std::chrono::duration<double>(Clock::now() - start).count(), 0);
}

void ClosedLoop(int port, const std::string& body, int connections, double seconds) {
  phase_cpu_start = CpuSeconds();
  std::vector<std::vector<double>> per(connections);
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  auto start = Clock::now();
  auto end = start + std::chrono::duration<double>(seconds);
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back([&, i] {
      auto c = Client(port);
      (void)c->Get("/healthz");  // handshake outside the measurement
      while (Clock::now() < end) {
        auto t0 = Clock::now();
        auto r = c->Post("/validate", body, "application/json");
        if (!r || r->status != 200) {
          ++errors;
          continue;
        }
        per[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
  char name[64];
  std::snprintf(name, sizeof(name), "closed loop, %d keep-alive conns", connections);
  Report(name, all, std::chrono::duration<double>(Clock::now() - start).count(), errors);
}

// `rate` reviews/s spread over `connections` senders, each on its own
// schedule; latency counts from the scheduled send time.
void FixedRate(int port, const std::string& body, int rate, int connections, double seconds) {
  phase_cpu_start = CpuSeconds();
  std::vector<std::vector<double>> per(connections);
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  auto start = Clock::now() + std::chrono::milliseconds(200);
  auto interval = std::chrono::duration<double>(static_cast<double>(connections) / rate);
  long per_sender = static_cast<long>(seconds * rate / connections);
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back([&, i] {
      auto c = Client(port);
      (void)c->Get("/healthz");
      auto offset = interval * (static_cast<double>(i) / connections);
      for (long n = 0; n < per_sender; ++n) {
        auto when = start + std::chrono::duration_cast<Clock::duration>(
                                offset + interval * static_cast<double>(n));
        std::this_thread::sleep_until(when);
        auto r = c->Post("/validate", body, "application/json");
        if (!r || r->status != 200) {
          ++errors;
          continue;
        }
        per[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - when).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
  char name[64];
  std::snprintf(name, sizeof(name), "fixed rate %d/s, %d conns", rate, connections);
  Report(name, all, std::chrono::duration<double>(Clock::now() - start).count(), errors);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int connections = 4;
  int rate = 1000;
  int serve_port = -1;
  int threads = 0;  // server threads; 0: one per CPU (the server's default)
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (a == "--connections")
      connections = std::atoi(argv[i + 1]);
    else if (a == "--rate")
      rate = std::atoi(argv[i + 1]);
    else if (a == "--serve")
      serve_port = std::atoi(argv[i + 1]);
    else if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
  }
  signal(SIGPIPE, SIG_IGN);
  sb::log::SetLevel(sb::log::Level::kWarn);

  sb::rules::Context context;
  for (int i = 0; i < 20; ++i) context.servers.push_back(Server(i));
  for (int i = 0; i < 200; ++i) context.backends.push_back(Backend(i));
  sb::webhook_admission::StaticContextSource source(std::move(context));
  sb::webhook_server::Metrics metrics;
  Certs certs = MakeCerts();
  sb::webhook_server::ServerOptions options;
  options.bind_address = "127.0.0.1";
  options.port = serve_port > 0 ? serve_port : 0;
  options.cert_file = certs.cert;
  options.key_file = certs.key;
  options.worker_threads = threads;
  auto server = sb::webhook_server::WebhookServer::Start(options, source, metrics);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  std::string body = ReviewBody();

  if (serve_port >= 0) {
    // For wrk: write the body for the Lua script, then serve until killed.
    std::FILE* f = std::fopen((certs.dir + "/review.json").c_str(), "w");
    std::fputs(body.c_str(), f);
    std::fclose(f);
    std::printf("serving on %d body %s/review.json\n", (*server)->port(), certs.dir.c_str());
    std::fflush(stdout);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGINT);
    pthread_sigmask(SIG_BLOCK, &s, nullptr);
    int sig;
    sigwait(&s, &sig);
    (*server)->Stop();
    std::filesystem::remove_all(certs.dir);
    return 0;
  }

  std::printf("review body %zu bytes; cache 200 backends on 20 servers; %u cores\n", body.size(),
              std::thread::hardware_concurrency());
  DecisionOnly(source, body, std::min(seconds, 2.0));
  ClosedLoop((*server)->port(), body, 1, seconds);
  ClosedLoop((*server)->port(), body, connections, seconds);
  FixedRate((*server)->port(), body, rate, 2, seconds * 2);
  (*server)->Stop();
  std::filesystem::remove_all(certs.dir);
  return 0;
}
