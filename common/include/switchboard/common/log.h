// Structured JSON logs: one object per line on stderr.
//
//   {"ts":"2026-11-30T10:00:00.123Z","level":"info","logger":"operator",
//    "msg":"reconciled","namespace":"a","name":"b"}
//
// Secret values must never be passed as fields: log the Secret's name, never
// its data. Thread-safe; a line is written with a single write(2).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace switchboard::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Minimum level written; from SWITCHBOARD_LOG_LEVEL (debug|info|warn|error)
// at first use, default info.
void SetLevel(Level level);
Level GetLevel();
bool ParseLevel(std::string_view text, Level* out);

// Where lines go; default stderr (fd 2). Tests may point this at a pipe.
void SetOutputFd(int fd);

// Writes one record. `fields` must be a JSON object (or null).
void Write(Level level, std::string_view logger, std::string_view msg,
           const nlohmann::json& fields = nullptr);

inline void Debug(std::string_view logger, std::string_view msg,
                  const nlohmann::json& f = nullptr) {
  Write(Level::kDebug, logger, msg, f);
}
inline void Info(std::string_view logger, std::string_view msg, const nlohmann::json& f = nullptr) {
  Write(Level::kInfo, logger, msg, f);
}
inline void Warn(std::string_view logger, std::string_view msg, const nlohmann::json& f = nullptr) {
  Write(Level::kWarn, logger, msg, f);
}
inline void Error(std::string_view logger, std::string_view msg,
                  const nlohmann::json& f = nullptr) {
  Write(Level::kError, logger, msg, f);
}

}  // namespace switchboard::log
