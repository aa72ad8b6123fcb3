// bench_validate: resources per second of `switchboard validate` on a
// generated corpus of 50,000 PubSubBackend/NatsServer documents (YAML in 100
// multi-document files, and the same as JSON), in-process through the
// command's runner and end to end through the binary. Prints one line per
// measurement (median of the repetitions).
//   [SWITCHBOARD_CLI=path/to/switchboard] bench_validate [--resources N] [--reps R] [--memory]
//                                                        [--keep DIR]
// --keep writes the corpus to DIR (DIR/yaml, DIR/json) and leaves it there,
// for profiling or for other validators on the same files.
// --memory also writes large single inputs (a 50 MB manifest with 2.2 M
// annotation keys, 50,000 labelled backends in one file) and prints the
// binary's peak resident memory against the input size.
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "switchboard/rules/validate.h"

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

// Peak resident memory of `switchboard validate -o json PATH`, from wait4().
// Returns kB, or -1 when the command could not run.
long PeakKb(const std::string& cli, const fs::path& path) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execl(cli.c_str(), cli.c_str(), "validate", "-o", "json", path.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  rusage u{};
  if (pid < 0 || wait4(pid, &status, 0, &u) != pid) return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) return -1;
  return u.ru_maxrss;
}

// Large single inputs: memory of the whole command against the input size.
//   annotations: one PubSubBackend whose metadata.annotations has 2.2 M keys
//                (50 MB), as YAML and as JSON;
//   labelled:    50,000 PubSubBackends with labels and annotations, one file;
//   compact:     the corpus above (100 files, no annotations).
void Memory(const std::string& cli, const fs::path& dir) {
  const int keys = 2'200'000;
  {
    std::ofstream y(dir / "annotations.yaml");
    y << "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: PubSubBackend\nmetadata:\n"
         "  name: big\n  namespace: team-a\n  annotations:\n";
    char line[64];
    for (int i = 0; i < keys; ++i) {
      std::snprintf(line, sizeof(line), "    k%07d: v%07d\n", i, i);
      y << line;
    }
    y << "spec:\n  kind: nats\n  nats:\n    serverRef: {name: shared, namespace: team-a}\n"
         "    subjectPrefix: hatchet.big\n";
    std::ofstream j(dir / "annotations.json");
    j << "{\"apiVersion\":\"pubsub.switchboard.dev/v1alpha1\",\"kind\":\"PubSubBackend\","
         "\"metadata\":{\"name\":\"big\",\"namespace\":\"team-a\",\"annotations\":{\n";
    for (int i = 0; i < keys; ++i) {
      std::snprintf(line, sizeof(line), "%s\"k%07d\":\"v%07d\"", i ? ",\n" : "", i, i);
      j << line;
    }
    j << "}},\"spec\":{\"kind\":\"nats\",\"nats\":{\"serverRef\":{\"name\":\"shared\","
         "\"namespace\":\"team-a\"},\"subjectPrefix\":\"hatchet.big\"}}}\n";
    std::ofstream m(dir / "labelled.yaml");
    for (int i = 0; i < 50'000; ++i) {
      m << (i ? "---\n" : "")
        << "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: PubSubBackend\n"
        << "metadata:\n  name: hatchet-" << i << "\n  namespace: team-" << i % 1000
        << "\n  labels:\n    app.kubernetes.io/name: hatchet\n    app.kubernetes.io/instance: "
           "hatchet-"
        << i << "\n    app.kubernetes.io/part-of: platform\n    team: team-" << i % 1000
        << "\n    env: prod\n  annotations:\n    owner: platform-team@example.com\n"
        << "    argocd.argoproj.io/sync-wave: \"1\"\n    note: backend number " << i
        << " for the hatchet installation of team " << i % 1000
        << "\nspec:\n  kind: nats\n  nats:\n    serverRef:\n      name: nats-" << i % 50
        << "\n      namespace: nats\n    subjectPrefix: hatchet.team-" << i % 1000 << ".i" << i
        << "\n    credentials:\n      rotationGracePeriod: 15m\n  output:\n    secretName: hatchet-"
        << i << "-env\n";
    }
  }
  auto size_of = [](const fs::path& p) {
    if (!fs::is_directory(p)) return static_cast<double>(fs::file_size(p));
    double total = 0;
    for (const auto& e : fs::recursive_directory_iterator(p)) {
      if (e.is_regular_file()) total += static_cast<double>(e.file_size());
    }
    return total;
  };
  for (const char* name :
       {"annotations.yaml", "annotations.json", "labelled.yaml", "yaml", "json"}) {
    fs::path path = dir / name;
    long kb = PeakKb(cli, path);
    double mb_in = size_of(path) / 1e6;
    std::printf("memory %-20s input %7.1f MB  peak RSS %7.1f MB  = %5.1fx the input\n", name, mb_in,
                kb / 1e3, kb / 1e3 / mb_in);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int resources = 50'000, reps = 3;
  bool memory = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--memory") memory = true;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--resources") resources = std::atoi(argv[i + 1]);
    if (a == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
  }
  fs::path dir = fs::temp_directory_path() / ("bench-validate-" + std::to_string(getpid()));
  bool keep = false;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--keep") {
      dir = argv[i + 1];
      keep = true;
    }
  }

  Generate(dir, resources);
  if (memory) {
    // First, while this process is small: a child's peak RSS (wait4)
    // includes what it shared with its parent before exec.
    malloc_trim(0);
    const char* other = std::getenv("SWITCHBOARD_CLI");
    Memory(other != nullptr && *other ? other : SWITCHBOARD_CLI_PATH, dir);
  }
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
      auto reports = switchboard::rules::ValidateAll(objects);
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

  // SWITCHBOARD_CLI: time (and measure) another build's binary, e.g. the
  // previous commit's, side by side with this one.
  const char* other_cli = std::getenv("SWITCHBOARD_CLI");
  std::string cli = other_cli != nullptr && *other_cli ? other_cli : SWITCHBOARD_CLI_PATH;
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
  if (!keep) fs::remove_all(dir);
  return 0;
}
