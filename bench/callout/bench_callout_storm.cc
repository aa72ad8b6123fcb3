// bench_callout_storm: a reconnect storm against nats-server in file mode.
// N users (one bcrypt hash at the given cost, as the operator renders the
// include file: cost 6 for generated passwords, 11 for user-chosen ones),
// N connections held open, the server stopped (SIGTERM) and started again
// on the same port; the time from the new process's start until every
// connection has authenticated again. The server checks each password
// against its bcrypt hash itself: what file mode costs a restart.
//
// The callout-mode storm (the same driver against the operator's static
// config and switchboard-authorizer) is in bench_callout --storm.
//
//   bench_callout_storm [--connections 1000] [--cost 6] [--server PATH]
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "storm.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

using namespace std::chrono_literals;
namespace testing = switchboard::testing;
namespace bench = switchboard::bench;

namespace {

// Room for the storm's sockets (and the server's, which inherits it).
void RaiseFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

std::string DefaultServer() {
  const char* t = std::getenv("SWITCHBOARD_TOOLS_DIR");
  return std::string(t && *t ? t : SWITCHBOARD_SOURCE_DIR "/.cache/tools") +
         "/bin/nats-server-callout";
}

}  // namespace

int main(int argc, char** argv) {
  int connections = 1000, cost = 6;
  std::string server = DefaultServer();
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--connections") {
      connections = std::atoi(argv[i + 1]);
    } else if (a == "--cost") {
      cost = std::atoi(argv[i + 1]);
    } else if (a == "--server") {
      server = argv[i + 1];
    } else {
      std::fprintf(stderr,
                   "usage: bench_callout_storm [--connections N] [--cost C] [--server PATH]\n");
      return 2;
    }
  }
  RaiseFileLimit();
  const std::string password = "storm-password-0123456789abcdef0123456789";
  auto hash = switchboard::operator_logic::BcryptHash(password, cost);
  if (!hash.ok()) {
    std::fprintf(stderr, "bcrypt: %s\n", hash.status().ToString().c_str());
    return 1;
  }
  testing::TempDir dir;
  const int port = testing::FreePort();
  std::string conf =
      "listen: \"127.0.0.1:" + std::to_string(port) + "\"\nauthorization {\n  users: [\n";
  std::vector<bench::StormTarget> targets;
  for (int i = 0; i < connections; i++) {
    const std::string user = "u" + std::to_string(i);
    conf += "    {user: \"" + user + "\", password: \"" + *hash + "\"}\n";
    targets.push_back({{port}, user, password});
  }
  conf += "  ]\n}\n";
  const std::string path = dir.WriteFile("nats.conf", conf);
  auto start_server = [&] {
    return testing::Process({{server, "-c", path}, {}, {}, dir.path() + "/nats.log", ""});
  };
  testing::Process nats = start_server();
  if (!testing::WaitForPort(port, 10s)) {
    std::fprintf(stderr, "nats-server did not start:\n%s\n", nats.Log().c_str());
    return 1;
  }
  bench::Storm storm(targets);
  auto first = storm.RunUntilAllUp(600s);
  std::printf("file mode, bcrypt cost %d, %d connections\n", cost, connections);
  std::printf("  first connect       %.2f s (%d up, %d refusals)\n", first.seconds, first.up,
              first.auth_refusals);
  if (!first.first_refusal.empty())
    std::printf("  first refusal: %s\n", first.first_refusal.c_str());
  if (!first.all_up) return 1;
  nats.Stop();
  const int down = storm.RunUntilDown(storm.size(), 10s);
  nats = start_server();
  auto again = storm.RunUntilAllUp(600s);
  const double server_cpu = bench::ProcessCpuSeconds(nats.pid());
  std::printf(
      "  after the restart   %d dropped; all %d back in %.2f s from the new process "
      "(%d up, %d TCP attempts, %d refusals)\n",
      down, connections, again.seconds, again.up, again.attempts, again.auth_refusals);
  if (!again.first_refusal.empty())
    std::printf("  first refusal: %s\n", again.first_refusal.c_str());
  std::printf("  = %.0f authenticated connects/s; nats-server CPU %.2f s (%.2f ms per connect)\n",
              connections / again.seconds, server_cpu, 1000 * server_cpu / connections);
  nats.Stop();
  return again.all_up ? 0 : 1;
}
