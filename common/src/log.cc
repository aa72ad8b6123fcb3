#include "switchboard/common/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

#include "switchboard/common/rfc3339.h"

namespace switchboard::log {
namespace {

Level LevelFromEnv() {
  Level l = Level::kInfo;
  if (const char* env = std::getenv("SWITCHBOARD_LOG_LEVEL")) ParseLevel(env, &l);
  return l;
}

std::atomic<int>& LevelSlot() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnv())};
  return level;
}

std::atomic<int> g_fd{2};

const char* LevelName(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void SetLevel(Level level) { LevelSlot().store(static_cast<int>(level)); }
Level GetLevel() { return static_cast<Level>(LevelSlot().load()); }

bool ParseLevel(std::string_view text, Level* out) {
  if (text == "debug")
    *out = Level::kDebug;
  else if (text == "info")
    *out = Level::kInfo;
  else if (text == "warn" || text == "warning")
    *out = Level::kWarn;
  else if (text == "error")
    *out = Level::kError;
  else
    return false;
  return true;
}

void SetOutputFd(int fd) { g_fd.store(fd); }

void Write(Level level, std::string_view logger, std::string_view msg,
           const nlohmann::json& fields) {
  if (static_cast<int>(level) < LevelSlot().load()) return;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = rfc3339::Format(std::chrono::system_clock::now(), rfc3339::Fraction::kMillis);
  line["level"] = LevelName(level);
  line["logger"] = logger;
  line["msg"] = msg;
  if (fields.is_object()) {
    for (auto it = fields.begin(); it != fields.end(); ++it) {
      if (!line.contains(it.key())) line[it.key()] = it.value();
    }
  }
  // Replace invalid UTF-8 rather than throw from a log call.
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(g_fd.load(), p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace switchboard::log
