#include "common.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "switchboard/common/log.h"

namespace switchboard::cli::pubsub {

namespace ps = switchboard::pubsub;

void TopicFlags::Register(flags::FlagSet* f) {
  f->String("tenant", &tenant, "tenant UUID: topic <uuid>_v1 (the tenant's stream)")
      .Metavar("UUID");
  f->String("scheduler", &scheduler, "partition id: topic <id>_scheduler_v1").Metavar("ID");
  f->String("topic", &topic, "raw topic name (one subject token)").Metavar("NAME");
}

Result<ps::Topic> TopicFlags::Resolve() const {
  int n = !tenant.empty() + !scheduler.empty() + !topic.empty();
  if (n != 1)
    return Status::InvalidArgument("give exactly one of --tenant, --scheduler or --topic");
  if (!tenant.empty()) return ps::Topic::TenantStream(tenant);
  if (!scheduler.empty()) return ps::Topic::SchedulerPartition(scheduler);
  return ps::Topic::FromName(topic);
}

int Fail(const std::string& cmd, const Status& status, int code) {
  std::fprintf(stderr, "switchboard pubsub %s: %s\n", cmd.c_str(), status.ToString().c_str());
  return code;
}

int ParseOrExit(flags::FlagSet* flags, const std::vector<std::string>& args,
                const std::string& cmd) {
  Status s = flags->Parse(args, 2);
  if (flags->help()) {
    std::fputs(flags->Help().c_str(), stdout);
    return kExitOk;
  }
  if (!s.ok()) return Fail(cmd, s, kExitUsage);
  return -1;
}

void QuietLogs() {
  if (std::getenv("SWITCHBOARD_LOG_LEVEL") == nullptr) log::SetLevel(log::Level::kWarn);
}

Result<std::string> ReadFileOrStdin(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("--payload-file: cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace switchboard::cli::pubsub
