// Command-line flags: the one parser behind every Switchboard binary
// (switchboard-operator, switchboard-webhook, switchboard-config-sync and the
// `switchboard` CLI), so each accepts the same forms and prints the same
// usage layout.
//
//   --name=value  --name value       a value flag
//   --name  --name=true|false        a boolean (Go's spellings: 1 0 t f true false ...)
//   -o value  -ovalue  -o=value      a one-letter alias, where a flag has one
//   --                               ends the flags: the rest is positional
//   -h  --help                       help: parsing stops, help() is true
//
// Durations take Go's grammar (switchboard/common/duration.h); a bare
// number other than 0 is refused, as Go refuses it. Addresses take
// ParseHostPort's forms. Pure: no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"

namespace switchboard::flags {

struct HostPort;

// Sets a flag's target from its text; a non-OK Status says what is wrong
// with the value (the parser prefixes "--name: ").
using Setter = std::function<Status(std::string_view value)>;

class Flag {
 public:
  // A one-letter alias: -o.
  Flag& Short(char letter) {
    short_ = letter;
    return *this;
  }
  // Another accepted name, not shown in the help.
  Flag& Alias(std::string name) {
    aliases_.push_back(std::move(name));
    return *this;
  }
  // The value's placeholder in the help ("PATH", "ADDR", ...).
  Flag& Metavar(std::string metavar) {
    metavar_ = std::move(metavar);
    return *this;
  }

 private:
  friend class FlagSet;
  std::string name_;
  std::vector<std::string> aliases_;
  char short_ = 0;
  std::string metavar_;  // empty for a boolean
  std::string help_;
  Setter set_;
  bool* bool_target_ = nullptr;  // set for a boolean
};

class FlagSet {
 public:
  // `usage` heads the help text: a "Usage: ..." line and what the program does.
  explicit FlagSet(std::string usage) : usage_(std::move(usage)) {}
  FlagSet(const FlagSet&) = delete;
  FlagSet& operator=(const FlagSet&) = delete;

  // `help` may hold '\n': continuation lines are indented under the first.
  Flag& String(std::string name, std::string* target, std::string help);
  // Repeatable: each occurrence appends.
  Flag& Strings(std::string name, std::vector<std::string>* target, std::string help);
  Flag& Bool(std::string name, bool* target, std::string help);
  // An integer in [min, max].
  template <typename T>
  Flag& Int(std::string name, T* target, std::string help, int64_t min = Lowest<T>(),
            int64_t max = Highest<T>()) {
    return Value(std::move(name), "N", std::move(help), [target, min, max](std::string_view v) {
      auto n = ParseInt(v, min, max);
      if (n.ok()) *target = static_cast<T>(*n);
      return n.status();
    });
  }
  // A Go duration in [min, max], truncated to milliseconds.
  Flag& Duration(std::string name, std::chrono::milliseconds* target, std::string help,
                 std::chrono::milliseconds min = std::chrono::milliseconds(0),
                 std::chrono::milliseconds max = std::chrono::milliseconds::max());
  // A comma-separated list (SplitList), replacing the target; `check`, when
  // given, judges each item.
  Flag& List(std::string name, std::string metavar, std::vector<std::string>* target,
             std::string help, std::function<Status(const std::string& item)> check = nullptr);
  // An address (ParseHostPort), metavar ADDR.
  Flag& Address(std::string name, HostPort* target, std::string help);
  // The same, checked and stored as given, for a caller that hands the text on.
  Flag& Address(std::string name, std::string* target, std::string help);
  // Any other value: `set` checks and stores it.
  Flag& Value(std::string name, std::string metavar, std::string help, Setter set);
  // The services' --log-level: debug | info | warn | error, checked by
  // log::ParseLevel and stored as given ("" when absent: the log's own
  // default, info or $SWITCHBOARD_LOG_LEVEL).
  Flag& LogLevel(std::string* target);

  // Arguments that are not flags are collected here; without this call
  // they are an error.
  void Positional(std::vector<std::string>* target) { positional_ = target; }

  // Parses args[start..]. Errors name the flag and the fix: "unknown flag
  // --x (see --help)", "--x needs a value", "--x: <what is wrong>".
  Status Parse(const std::vector<std::string>& args, size_t start = 0);
  bool help() const { return help_; }

  // The usage text, every flag with its help, and the duration grammar
  // and the address forms when a flag takes one.
  std::string Help() const;

  // "12" in [min, max]; kInvalidArgument naming the range otherwise.
  static Result<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);
  // Go's strconv.ParseBool.
  static Result<bool> ParseBool(std::string_view text);

 private:
  // T's range, clipped to int64_t's.
  template <typename T>
  static constexpr int64_t Lowest() {
    if constexpr (std::numeric_limits<T>::is_signed) return std::numeric_limits<T>::min();
    return 0;
  }
  template <typename T>
  static constexpr int64_t Highest() {
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<T>::max());
    constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return static_cast<int64_t>(kMax < kInt64Max ? kMax : kInt64Max);
  }

  Flag* Find(std::string_view name);
  Flag* FindShort(char letter);
  Flag& Add(std::string name, std::string metavar, std::string help, Setter set);
  Status Set(Flag& flag, std::string_view shown, std::string_view value);

  std::string usage_;
  std::deque<Flag> flags_;  // a deque: Flag& handed out stay valid
  std::vector<std::string>* positional_ = nullptr;
  bool has_duration_ = false;
  bool has_address_ = false;
  bool help_ = false;
};

// A binary's whole flag list, bound by `bind(FlagSet*, T*)` in one place for
// both ends: ParseInto parses `args` into a default T (T::help set on
// --help, where parsing stops; the caller's own checks come after),
// HelpFor is that list's help text.
template <class T, class Bind>
Result<T> ParseInto(std::string usage, const std::vector<std::string>& args, Bind&& bind) {
  T out;
  FlagSet set(std::move(usage));
  bind(&set, &out);
  SB_RETURN_IF_ERROR(set.Parse(args));
  out.help = set.help();
  return out;
}
template <class T, class Bind>
std::string HelpFor(std::string usage, Bind&& bind) {
  T unused;
  FlagSet set(std::move(usage));
  bind(&set, &unused);
  return set.Help();
}

// A comma-separated list flag's items, trimmed of spaces, blanks dropped:
// "a, b,,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitList(std::string_view text);

// An address flag: "host:port", ":port" (all interfaces), "[v6]:port", or
// "0" / "" (disabled: port -1).
struct HostPort {
  std::string host;  // "" = all interfaces
  int port = -1;     // -1 = disabled
};
Result<HostPort> ParseHostPort(std::string_view text);

}  // namespace switchboard::flags
