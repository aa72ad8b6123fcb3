#include "flags.h"

#include <charconv>

#include "switchboard/common/numeric.h"
#include "switchboard/pubsub/env.h"

namespace switchboard::cli::pubsub {

bool ParseDuration(const std::string& text, std::chrono::milliseconds* out) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) return false;
  std::string unit(end, text.data() + text.size());
  double ms;
  if (unit.empty() || unit == "s")
    ms = value * 1000;
  else if (unit == "ms")
    ms = value;
  else if (unit == "m")
    ms = value * 60000;
  else if (unit == "h")
    ms = value * 3600000;
  else
    return false;
  auto whole_ms = TruncateToInt64(ms);
  if (!whole_ms) return false;  // 1e300s, inf, nan: not a duration
  *out = std::chrono::milliseconds(*whole_ms);
  return true;
}

void Flags::String(const std::string& n, std::string* t, const std::string& h) {
  defs_.push_back({n, Kind::kString, t, h});
}
void Flags::Strings(const std::string& n, std::vector<std::string>* t, const std::string& h) {
  defs_.push_back({n, Kind::kStrings, t, h});
}
void Flags::Bool(const std::string& n, bool* t, const std::string& h) {
  defs_.push_back({n, Kind::kBool, t, h});
}
void Flags::Int(const std::string& n, int64_t* t, const std::string& h) {
  defs_.push_back({n, Kind::kInt, t, h});
}
void Flags::Duration(const std::string& n, std::chrono::milliseconds* t, const std::string& h) {
  defs_.push_back({n, Kind::kDuration, t, h});
}

Flags::Def* Flags::Find(const std::string& name) {
  for (auto& d : defs_) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

bool Flags::Given(const std::string& name) const {
  for (const auto& d : defs_) {
    if (d.name == name) return d.given;
  }
  return false;
}

Status Flags::Parse(const std::vector<std::string>& args, size_t start) {
  for (size_t i = start; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a == "--") {
      positional_.insert(positional_.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                         args.end());
      break;
    }
    if (!a.starts_with("--")) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    Def* d = Find(name);
    if (d == nullptr) return Status::InvalidArgument("unknown flag --" + name + " (see --help)");
    d->given = true;
    if (d->kind == Kind::kBool) {
      if (has_value && value != "true" && value != "false") {
        return Status::InvalidArgument("--" + name + ": want true or false, got \"" + value + "\"");
      }
      *static_cast<bool*>(d->target) = !has_value || value == "true";
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return Status::InvalidArgument("--" + name + ": missing value");
      value = args[++i];
    }
    switch (d->kind) {
      case Kind::kString:
        *static_cast<std::string*>(d->target) = value;
        break;
      case Kind::kStrings:
        static_cast<std::vector<std::string>*>(d->target)->push_back(value);
        break;
      case Kind::kInt: {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size()) {
          return Status::InvalidArgument("--" + name + ": want an integer, got \"" + value + "\"");
        }
        *static_cast<int64_t*>(d->target) = v;
        break;
      }
      case Kind::kDuration:
        if (!ParseDuration(value, static_cast<std::chrono::milliseconds*>(d->target))) {
          return Status::InvalidArgument(
              "--" + name + ": want a duration like 500ms, 5s or 2m, got \"" + value + "\"");
        }
        break;
      case Kind::kBool:
        break;
    }
  }
  return Status::Ok();
}

std::string Flags::Help() const {
  std::string out = usage_ + "\n\nFlags:\n";
  for (const auto& d : defs_) {
    std::string left = "  --" + d.name;
    switch (d.kind) {
      case Kind::kString:
      case Kind::kStrings:
        left += " STRING";
        break;
      case Kind::kInt:
        left += " N";
        break;
      case Kind::kDuration:
        left += " DURATION";
        break;
      case Kind::kBool:
        break;
    }
    if (left.size() < 26)
      left.resize(26, ' ');
    else
      left += "\n" + std::string(26, ' ');
    out += left + d.help + "\n";
  }
  out += "  --help                  show this help\n";
  return out;
}

void ConnectionFlags::Register(Flags* f) {
  f->String("url", &url, "comma-separated NATS seed URLs (env SERVER_MSGQUEUE_PUBSUB_NATS_URL)");
  f->String("username", &username, "NATS user (env SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME)");
  f->String("password", &password,
            "NATS password (env SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD; prefer the env)");
  f->String(
      "prefix", &prefix,
      "subject prefix (env SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX, default hatchet.pubsub)");
  f->String("ca-file", &ca_file, "PEM CA bundle to trust for tls:// servers");
  f->String("cert-file", &cert_file, "PEM client certificate (with --key-file)");
  f->String("key-file", &key_file, "PEM client key");
}

switchboard::pubsub::NatsOptions ConnectionFlags::ToOptions() const {
  namespace ps = switchboard::pubsub;
  ps::ConnectionSettings s = ps::SettingsFromEnv();
  if (!url.empty()) s.urls = url;
  if (!username.empty()) s.username = username;
  if (!password.empty()) s.password = password;
  if (!prefix.empty()) s.subject_prefix = prefix;
  ps::NatsOptions o = ps::ToNatsOptions(s);
  o.ca_file = ca_file;
  o.cert_file = cert_file;
  o.key_file = key_file;
  o.connect_timeout = timeout;
  o.name = "switchboard-cli";
  return o;
}

const char* ConnectionFlags::EnvHelp() {
  return "Connection settings default to the engine's own variables, so an env Secret\n"
         "written for a Hatchet engine works unchanged:\n"
         "  SERVER_MSGQUEUE_PUBSUB_NATS_URL, _USERNAME, _PASSWORD, _SUBJECT_PREFIX";
}

}  // namespace switchboard::cli::pubsub
