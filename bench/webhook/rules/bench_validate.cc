// bench_validate: resources per second of `switchboard validate` on a
// generated corpus of 50,000 PubSubBackend/NatsServer documents (YAML in 100
// multi-document files, and the same as JSON), in-process through the
// command's runner and end to end through the binary. Prints one line per
// measurement (median of the repetitions).
//   bench_validate [--resources N] [--reps R]
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runner.h"
#include "switchboard/api/documents.h"
#include "switchboard/validation/validate.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using switchboard::cli::validate::Options;

constexpr int kServers = 50;
constexpr int kFiles = 100;

std::string ServerYaml(int i) {
  std::ostringstream o;
  o << "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: NatsServer\nmetadata:\n  name: nats-"
    << i << "\n  namespace: nats\nspec:\n  url: nats://nats-" << i
    << "-0.nats.svc:4222,nats://nats-" << i
    << "-1.nats.svc:4222\n  maxPayload: 16Mi\n  allowedNamespaces:\n    from: All\n";
  return o.str();
}

// Backends: 80% nats (unique prefix per server), 10% rabbitmq, 10% postgres.
std::string BackendYaml(int i) {
  std::ostringstream o;
  o << "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: PubSubBackend\nmetadata:\n  name: "
       "hatchet-"
    << i << "\n  namespace: team-" << (i % 1000) << "\n  labels:\n    app: hatchet\nspec:\n";
  if (i % 10 == 8) {
    o << "  kind: rabbitmq\n  rabbitmq:\n    urlSecretRef: {name: rmq-" << i
      << ", key: url}\n    maxPubChans: 10\n";
  } else if (i % 10 == 9) {
    o << "  kind: postgres\n  postgres:\n    maxConns: 8\n    minConns: 2\n";
  } else {
    o << "  kind: nats\n  nats:\n    serverRef:\n      name: nats-" << (i % kServers)
      << "\n      namespace: nats\n    subjectPrefix: hatchet.team-" << (i % 1000) << ".i" << i
      << "\n    credentials:\n      rotationGracePeriod: 15m\n";
  }
  o << "  output:\n    secretName: hatchet-" << i << "-env\n";
  return o.str();
}

// Writes the corpus as YAML (multi-document files) and JSON (one List per
// file); returns the number of resources.
int Generate(const fs::path& dir, int resources) {
  fs::create_directories(dir / "yaml");
  fs::create_directories(dir / "json");
  std::vector<std::ofstream> yaml(kFiles);
  std::vector<std::vector<std::string>> json_items(kFiles);
  for (int f = 0; f < kFiles; ++f)
    yaml[f].open(dir / "yaml" / ("part-" + std::to_string(f) + ".yaml"));
  for (int i = 0; i < resources; ++i) {
    std::string doc = i < kServers ? ServerYaml(i) : BackendYaml(i);
    int f = i % kFiles;
    yaml[f] << "---\n" << doc;
    auto parsed = switchboard::api::LoadDocuments(doc);
    json_items[f].push_back(parsed.documents.at(0).value.dump());
  }
  for (int f = 0; f < kFiles; ++f) {
    std::ofstream j(dir / "json" / ("part-" + std::to_string(f) + ".json"));
    j << "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n";
    for (size_t k = 0; k < json_items[f].size(); ++k) j << (k ? ",\n" : "") << json_items[f][k];
    j << "\n]}\n";
  }
  return resources;
}

// CPU seconds of this process, or of its waited-for children. The machine is
// shared (load often far above its 2 cores), so CPU time is the fairer
// figure; wall time is printed beside it.
double CpuSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Sample {
  double wall;
  double cpu;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Report(const char* name, int resources, const std::vector<Sample>& samples) {
  std::vector<double> wall, cpu;
  for (const auto& s : samples) {
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
  }
  double w = Median(wall), c = Median(cpu);
  std::printf("%-36s %6d res  cpu %7.3f s = %9.0f res/s   wall %7.3f s = %9.0f res/s\n", name,
              resources, c, resources / c, w, resources / w);
  std::fflush(stdout);
}

Sample TimeCheck(const fs::path& dir, int expect) {
  Options options;
  options.inputs = {dir.string()};
  std::istringstream no_stdin;
  double c0 = CpuSeconds(RUSAGE_SELF);
  auto t0 = Clock::now();
  auto result = switchboard::cli::validate::Check(options, no_stdin);
  std::string out;
  switchboard::cli::validate::WriteJson(result, out);  // the output is part of the command
  Sample s{std::chrono::duration<double>(Clock::now() - t0).count(), CpuSeconds(RUSAGE_SELF) - c0};
  if (static_cast<int>(result.Checked()) != expect || result.Invalid() != 0) {
    std::fprintf(stderr,
                 "bench_validate: expected %d valid resources, got %zu checked, %zu invalid\n",
                 expect, result.Checked(), result.Invalid());
    std::exit(1);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int resources = 50'000, reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--resources") resources = std::atoi(argv[i + 1]);
    if (a == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
  }
  fs::path dir = fs::temp_directory_path() / ("bench-validate-" + std::to_string(getpid()));
  Generate(dir, resources);
  std::printf(
      "bench_validate: corpus of %d resources (%d NatsServers, the rest PubSubBackends) in "
      "%d files per format\n",
      resources, kServers, kFiles);

  for (const char* fmt : {"yaml", "json"}) {
    std::vector<Sample> total, load, rules;
    for (int r = 0; r < reps; ++r) {
      total.push_back(TimeCheck(dir / fmt, resources));
      // Phases, for where the time goes: parsing alone, then the rules alone.
      std::vector<nlohmann::json> objects;
      double c0 = CpuSeconds(RUSAGE_SELF);
      auto t0 = Clock::now();
      for (const auto& e : fs::directory_iterator(dir / fmt)) {
        auto text = switchboard::api::ReadFileText(e.path().string());
        auto loaded = switchboard::api::LoadDocuments(*text);
        for (auto& d : loaded.documents) objects.push_back(std::move(d.value));
      }
      auto t1 = Clock::now();
      double c1 = CpuSeconds(RUSAGE_SELF);
      auto reports = switchboard::validation::ValidateAll(objects);
      auto t2 = Clock::now();
      double c2 = CpuSeconds(RUSAGE_SELF);
      load.push_back({std::chrono::duration<double>(t1 - t0).count(), c1 - c0});
      rules.push_back({std::chrono::duration<double>(t2 - t1).count(), c2 - c1});
    }
    std::string name = std::string("validate ") + fmt + " (in-process)";
    Report(name.c_str(), resources, total);
    Report((std::string("  load ") + fmt + " only").c_str(), resources, load);
    Report("  rules only (ValidateAll)", resources, rules);
  }

  std::string cli = SWITCHBOARD_CLI_PATH;
  if (!cli.empty() && fs::exists(cli)) {
    for (const char* fmt : {"yaml", "json"}) {
      std::vector<Sample> secs;
      for (int r = 0; r < reps; ++r) {
        std::string cmd = cli + " validate -o json " + (dir / fmt).string() + " > /dev/null";
        double c0 = CpuSeconds(RUSAGE_CHILDREN);
        auto t0 = Clock::now();
        int rc = std::system(cmd.c_str());
        secs.push_back({std::chrono::duration<double>(Clock::now() - t0).count(),
                        CpuSeconds(RUSAGE_CHILDREN) - c0});
        if (rc != 0) {
          std::fprintf(stderr, "bench_validate: '%s' exited %d\n", cmd.c_str(), WEXITSTATUS(rc));
          return 1;
        }
      }
      Report((std::string("switchboard validate ") + fmt + " (process)").c_str(), resources, secs);
    }
  }
  fs::remove_all(dir);
  return 0;
}
