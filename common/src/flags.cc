#include "switchboard/common/flags.h"

#include <charconv>
#include <optional>

#include "switchboard/common/duration.h"
#include "switchboard/common/log.h"

namespace switchboard::flags {
namespace {

constexpr size_t kHelpColumn = 32;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// 90000ms -> "1m30s": the duration in Go's words, for range messages.
std::string GoDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0";
  std::string out;
  if (ms >= 3600000) out += std::to_string(ms / 3600000) + "h";
  if (ms % 3600000 >= 60000) out += std::to_string(ms % 3600000 / 60000) + "m";
  if (ms % 60000 >= 1000) out += std::to_string(ms % 60000 / 1000) + "s";
  if (ms % 1000 != 0) out += std::to_string(ms % 1000) + "ms";
  return out;
}

}  // namespace

Result<int64_t> FlagSet::ParseInt(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v < min || v > max) {
    std::string want = "want an integer";
    if (min != std::numeric_limits<int64_t>::min() || max != std::numeric_limits<int64_t>::max()) {
      want += " from " + std::to_string(min) + " to " + std::to_string(max);
    }
    return Status::InvalidArgument(want + ", got " + Quote(text));
  }
  return v;
}

Result<bool> FlagSet::ParseBool(std::string_view t) {
  if (t == "1" || t == "t" || t == "T" || t == "true" || t == "TRUE" || t == "True") return true;
  if (t == "0" || t == "f" || t == "F" || t == "false" || t == "FALSE" || t == "False") {
    return false;
  }
  return Status::InvalidArgument("want true or false, got " + Quote(t));
}

Flag& FlagSet::Add(std::string name, std::string metavar, std::string help, Setter set) {
  Flag& f = flags_.emplace_back();
  f.name_ = std::move(name);
  f.metavar_ = std::move(metavar);
  f.help_ = std::move(help);
  f.set_ = std::move(set);
  return f;
}

Flag& FlagSet::Value(std::string name, std::string metavar, std::string help, Setter set) {
  return Add(std::move(name), std::move(metavar), std::move(help), std::move(set));
}

Flag& FlagSet::String(std::string name, std::string* target, std::string help) {
  return Add(std::move(name), "STRING", std::move(help), [target](std::string_view v) {
    *target = std::string(v);
    return Status::Ok();
  });
}

Flag& FlagSet::Strings(std::string name, std::vector<std::string>* target, std::string help) {
  return Add(std::move(name), "STRING", std::move(help), [target](std::string_view v) {
    target->emplace_back(v);
    return Status::Ok();
  });
}

Flag& FlagSet::Bool(std::string name, bool* target, std::string help) {
  Flag& f = Add(std::move(name), "", std::move(help), [target](std::string_view v) {
    auto b = ParseBool(v);
    if (b.ok()) *target = *b;
    return b.status();
  });
  f.bool_target_ = target;
  return f;
}

Flag& FlagSet::Duration(std::string name, std::chrono::milliseconds* target, std::string help,
                        std::chrono::milliseconds min, std::chrono::milliseconds max) {
  has_duration_ = true;
  return Add(
      std::move(name), "DURATION", std::move(help),
      [target, min, max](std::string_view v) -> Status {
        auto ns = ParseDuration(v);
        if (!ns.ok()) return ns.status();
        auto d =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(*ns));
        if (d < min || d > max || *ns < 0) {
          std::string range = max == std::chrono::milliseconds::max()
                                  ? "of at least " + GoDuration(min)
                                  : "from " + GoDuration(min) + " to " + GoDuration(max);
          return Status::InvalidArgument(Quote(v) + " is out of range; use a duration " + range);
        }
        *target = d;
        return Status::Ok();
      });
}

Flag& FlagSet::List(std::string name, std::string metavar, std::vector<std::string>* target,
                    std::string help, std::function<Status(const std::string& item)> check) {
  return Add(std::move(name), std::move(metavar), std::move(help),
             [target, check = std::move(check)](std::string_view v) -> Status {
               std::vector<std::string> items = SplitList(v);
               if (check) {
                 for (const auto& item : items) SB_RETURN_IF_ERROR(check(item));
               }
               *target = std::move(items);
               return Status::Ok();
             });
}

Flag& FlagSet::Address(std::string name, HostPort* target, std::string help) {
  has_address_ = true;
  return Add(std::move(name), "ADDR", std::move(help), [target](std::string_view v) {
    auto hp = ParseHostPort(v);
    if (hp.ok()) *target = *hp;
    return hp.status();
  });
}

Flag& FlagSet::Address(std::string name, std::string* target, std::string help) {
  has_address_ = true;
  return Add(std::move(name), "ADDR", std::move(help), [target](std::string_view v) {
    auto hp = ParseHostPort(v);
    if (hp.ok()) *target = std::string(v);
    return hp.status();
  });
}

Flag* FlagSet::Find(std::string_view name) {
  for (auto& f : flags_) {
    if (f.name_ == name) return &f;
    for (const auto& a : f.aliases_) {
      if (a == name) return &f;
    }
  }
  return nullptr;
}

Flag* FlagSet::FindShort(char letter) {
  for (auto& f : flags_) {
    if (f.short_ == letter) return &f;
  }
  return nullptr;
}

Status FlagSet::Set(Flag& flag, std::string_view shown, std::string_view value) {
  Status s = flag.set_(value);
  if (!s.ok()) return Status::InvalidArgument(std::string(shown) + ": " + s.message());
  return s;
}

Status FlagSet::Parse(const std::vector<std::string>& args, size_t start) {
  auto positional = [&](const std::string& a) -> Status {
    if (positional_ == nullptr) {
      return Status::InvalidArgument("unexpected argument " + Quote(a) +
                                     "; flags start with -- (see --help)");
    }
    positional_->push_back(a);
    return Status::Ok();
  };
  for (size_t i = start; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      help_ = true;
      return Status::Ok();
    }
    if (a == "--") {
      for (++i; i < args.size(); ++i) SB_RETURN_IF_ERROR(positional(args[i]));
      break;
    }
    if (a.size() < 2 || a[0] != '-') {  // "-" (stdin) and "" are arguments too
      SB_RETURN_IF_ERROR(positional(a));
      continue;
    }
    // Split into the flag as written, and the value attached to it if any.
    Flag* flag;
    std::string shown;
    std::optional<std::string_view> value;
    std::string_view rest;
    if (a[1] == '-') {
      std::string_view body = std::string_view(a).substr(2);
      size_t eq = body.find('=');
      shown = "--" + std::string(body.substr(0, eq));
      if (eq != std::string_view::npos) value = body.substr(eq + 1);
      flag = Find(body.substr(0, eq));
    } else {
      shown = a.substr(0, 2);
      rest = std::string_view(a).substr(2);
      flag = FindShort(a[1]);
      if (!rest.empty()) value = rest.front() == '=' ? rest.substr(1) : rest;
      // -vx: a boolean takes no attached value except =true|false.
      if (flag && flag->bool_target_ && !rest.empty() && rest.front() != '=') flag = nullptr;
      if (flag == nullptr) shown = a;
    }
    if (flag == nullptr) return Status::InvalidArgument("unknown flag " + shown + " (see --help)");
    if (flag->bool_target_ != nullptr && !value) {
      *flag->bool_target_ = true;
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        return Status::InvalidArgument(shown + " needs a value (see --help)");
      }
      value = args[++i];
    }
    SB_RETURN_IF_ERROR(Set(*flag, shown, *value));
  }
  return Status::Ok();
}

std::string FlagSet::Help() const {
  std::string out = usage_;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\nFlags:\n";
  auto line = [&](char letter, const std::string& name, const std::string& metavar,
                  const std::string& help) {
    // Long names line up whether or not a flag has a letter (-h always has).
    std::string left = letter != 0 ? std::string("  -") + letter + ", " : "      ";
    left += "--" + name;
    if (!metavar.empty()) left += " " + metavar;
    if (left.size() + 1 < kHelpColumn) {
      left.resize(kHelpColumn, ' ');
    } else {
      left += "\n" + std::string(kHelpColumn, ' ');
    }
    out += left;
    for (char c : help) {
      out += c;
      if (c == '\n') out += std::string(kHelpColumn, ' ');
    }
    out += '\n';
  };
  for (const auto& f : flags_) line(f.short_, f.name_, f.metavar_, f.help_);
  line('h', "help", "", "this help");
  if (has_duration_) {
    out +=
        "\nDurations are Go's: numbers with units (ns, us, ms, s, m, h), e.g. 500ms, 10s, 1m30s\n"
        "or 1.5h. A bare number is refused, except 0.\n";
  }
  if (has_address_) {
    if (!has_duration_) out += '\n';
    out += "Addresses: host:port or :port.\n";
  }
  return out;
}

Flag& FlagSet::LogLevel(std::string* target) {
  return Value("log-level", "LEVEL",
               "debug | info | warn | error (default info or $SWITCHBOARD_LOG_LEVEL)",
               [target](std::string_view v) -> Status {
                 log::Level level;
                 if (!log::ParseLevel(v, &level)) {
                   return Status::InvalidArgument(
                       "\"" + std::string(v) + "\" is not a level; use debug, info, warn or error");
                 }
                 *target = std::string(v);
                 return Status::Ok();
               });
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

Result<HostPort> ParseHostPort(std::string_view text) {
  if (text == "0" || text.empty()) return HostPort{};
  size_t colon = text.rfind(':');
  auto bad = [&] {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" is not an address; use host:port, :port, or 0 to disable");
  };
  if (colon == std::string_view::npos) return bad();
  auto port = FlagSet::ParseInt(text.substr(colon + 1), 0, 65535);
  if (!port.ok()) return bad();
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{host, static_cast<int>(*port)};
}

}  // namespace switchboard::flags
