#include "switchboard/api/values.h"

#include "switchboard/api/constants.h"
#include "switchboard/api/limits.h"
#include "switchboard/api/quantity.h"

namespace switchboard::api {
namespace {

bool IsAsciiAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsAsciiWhitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The CRD's ^[A-Za-z0-9][-._A-Za-z0-9]*$, at most `max` characters.
std::string CheckUsernameUpTo(std::string_view name, size_t max) {
  // Quoted only for a message: a valid name (the common case) costs no copy.
  if (auto hidden = FindInvisible(name)) {
    return InvisibleMessage(*hidden, Quote(name), "user names");
  }
  bool bad = name.empty() || name.size() > max || !IsAsciiAlnum(name.front());
  for (unsigned char c : name) {
    if (!IsAsciiAlnum(c) && c != '-' && c != '_' && c != '.') bad = true;
  }
  if (!bad) return "";
  return Quote(name) + " is not a valid NATS user name; use 1-" + std::to_string(max) +
         " letters, digits, '-', '_' or '.', starting with a letter or digit (or omit "
         "it for <namespace>-<name>, when that is short enough)";
}

std::string Bytes(int64_t bytes) {
  return FormatBytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

}  // namespace

std::string Quote(std::string_view value) {
  std::string out = "\"";
  size_t n = 0;
  for (size_t i = 0; i < value.size();) {
    if (++n > 80) {
      out += "...";
      break;
    }
    char32_t c = 0;
    size_t len = DecodeUtf8(value, i, &c);
    if (len == 0) len = 1;  // EscapeInvisible writes the byte as \xNN
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += EscapeInvisible(value.substr(i, len));
    }
    i += len;
  }
  return out + "\"";
}

std::string InvisibleMessage(const InvisibleChar& hidden, const std::string& quoted,
                             std::string_view what) {
  if (hidden.invalid_utf8) {
    return "is not valid UTF-8: " + hidden.Describe() + " at character " +
           std::to_string(hidden.position) + " of " + quoted + "; write it as UTF-8 text";
  }
  return "must not contain " + hidden.Describe() + " (character " +
         std::to_string(hidden.position) + " of " + quoted + "); " + std::string(what) +
         " are compared by eye in kubectl and NATS monitoring, where an invisible character "
         "makes two different ones look the same: delete it (retype the value)";
}

std::string CheckUsername(std::string_view name) {
  return CheckUsernameUpTo(name, kMaxUsernameLength);
}

std::string CheckRenderedUsername(std::string_view name) {
  return CheckUsernameUpTo(name, kMaxRenderedUsernameLength);
}

std::vector<std::string> SubjectPrefixErrors(std::string_view prefix) {
  std::vector<std::string> errors;
  if (prefix.empty()) {
    errors.push_back("must not be empty; omit the field for the default " +
                     std::string(kDefaultSubjectPrefix) + " or set dot-separated tokens");
    return errors;
  }
  // Quoted only for a message: a valid prefix (the common case) costs no copy.
  std::string quoted;
  auto q = [&]() -> const std::string& {
    if (quoted.empty()) quoted = Quote(prefix);
    return quoted;
  };
  if (prefix.front() == '.') {
    errors.push_back("must not start with a dot in " + q() + "; remove the leading '.'");
  }
  if (prefix.back() == '.') {
    errors.push_back("must not end with a dot in " + q() +
                     "; remove the trailing '.' (the topic is appended as prefix + \".\" + topic)");
  }
  // Tokens, 1-based as users count them; a leading or trailing dot is
  // reported above.
  size_t token = 1, start = 0;
  for (size_t i = 0; i <= prefix.size(); ++i) {
    if (i < prefix.size() && prefix[i] != '.') continue;
    bool edge = (i == 0 && start == 0) || (i == prefix.size() && start == prefix.size());
    if (i == start && !edge) {
      errors.push_back("token " + std::to_string(token) + " is empty in " + q() +
                       "; use non-empty dot-separated tokens");
      break;
    }
    ++token;
    start = i + 1;
  }
  bool bad_space = false, bad_wild = false, bad_gt = false, bad_quote = false;
  for (unsigned char c : prefix) {
    if (IsAsciiWhitespace(c)) {
      bad_space = true;
    } else if (c == '*') {
      bad_wild = true;
    } else if (c == '>') {
      bad_gt = true;
    } else if (c == '"' || c == '\\') {
      bad_quote = true;
    }
  }
  if (bad_space) {
    errors.push_back("must not contain whitespace in " + q() +
                     "; NATS splits subjects on spaces: use '-' or '_' instead");
  }
  if (bad_wild) {
    errors.push_back("must not contain the wildcard '*' in " + q() +
                     "; a prefix is a literal subject: remove the '*'");
  }
  if (bad_gt) {
    errors.push_back("must not contain the wildcard '>' in " + q() +
                     "; a prefix is a literal subject: remove the '>'");
  }
  // ASCII whitespace has its own message above; every other character a
  // reader cannot see (controls included) is named by its code point.
  if (auto hidden = FindInvisible(prefix, IsAsciiWhitespace)) {
    errors.push_back(InvisibleMessage(*hidden, q(), "prefixes"));
  }
  if (bad_quote) {
    errors.push_back("must not contain '\"' or '\\' in " + q() +
                     "; they break the rendered NATS permissions: use [A-Za-z0-9_-] tokens");
  }
  if (prefix.front() == '$') {
    errors.push_back(
        "must not start with '$' in " + q() +
        "; $-subjects ($SYS, $JS, ...) are reserved by NATS: choose another first token");
  }
  if (prefix.size() > kMaxSubjectPrefixLength) {
    errors.push_back("is " + std::to_string(prefix.size()) + " characters, more than " +
                     std::to_string(kMaxSubjectPrefixLength) +
                     "; subjects (prefix + \".\" + topic, topics up to " +
                     std::to_string(kTopicReserve) + " characters) must stay under " +
                     std::to_string(kMaxSubjectLength) + ": shorten the prefix");
  }
  return errors;
}

std::string CheckSubjectPrefix(std::string_view prefix) {
  auto errors = SubjectPrefixErrors(prefix);
  return errors.empty() ? std::string() : std::move(errors.front());
}

std::string CheckMaxPayload(int64_t bytes) {
  const std::string min = FormatBytes(kEngineMaxPayload);
  const std::string max = FormatBytes(kNatsMaxPayloadLimit);
  if (bytes < kEngineMaxPayload) {
    return "is " + Bytes(bytes) + ", below " + min +
           "; Hatchet's engine refuses to start on a server whose max_payload is under " + min +
           ": set at least " + min;
  }
  if (bytes > kNatsMaxPayloadLimit) {
    return "is " + Bytes(bytes) + ", above NATS's hard limit of " + max + "; set " + min + " to " +
           max;
  }
  return "";
}

namespace {

std::string CheckCount(int64_t n, int64_t min, int64_t max, std::string_view what) {
  if (n < min) {
    return "is " + std::to_string(n) + ", below " + std::to_string(min) + "; set " +
           std::to_string(min) + " to " + std::to_string(max) + " " + std::string(what) +
           ", or remove the field for no limit";
  }
  if (n > max) {
    return "is " + std::to_string(n) + ", above " + std::to_string(max) + "; set " +
           std::to_string(min) + " to " + std::to_string(max) + " " + std::string(what) +
           ", or remove the field for no limit";
  }
  return "";
}

}  // namespace

std::string CheckMaxConnections(int64_t n) {
  return CheckCount(n, kMinInstallationConnections, kMaxInstallationConnections,
                    "connections (of the installation, across the cluster)");
}

std::string CheckMaxSubscriptions(int64_t n) {
  return CheckCount(n, kMinInstallationSubscriptions, kMaxInstallationSubscriptions,
                    "subscriptions (per connection; Hatchet's engine subscribes once per "
                    "tenant)");
}

std::string CheckLimitOverride(std::string_view field, int64_t value,
                               std::optional<int64_t> server_default, bool raise_allowed,
                               std::string_view server) {
  if (!server_default || value <= *server_default || raise_allowed) return "";
  const std::string def = std::to_string(*server_default);
  return "is " + std::to_string(value) + ", above NatsServer " + std::string(server) +
         "'s default spec.installationLimits." + std::string(field) + " (" + def +
         "), and that server lets backends only lower its defaults (spec.installationLimits."
         "overrides: " +
         std::string(kOverridesLowerOnly) + "); set at most " + def +
         ", remove the field for the server's default, or have the server set "
         "spec.installationLimits.overrides: " +
         std::string(kOverridesLowerOrRaise);
}

std::string LimitsNeedAccounts(bool auth_callout) {
  std::string why =
      auth_callout
          ? "in AuthCallout mode with isolation: Permissions every installation's user lands in "
            "one shared account, and NATS "
            "does not apply the limits of a user JWT an auth callout returns (only its "
            "permissions)"
          : "with isolation: Permissions every installation's user is in one shared account, "
            "and NATS enforces connection and subscription limits per account, not per user";
  return why + ", so these limits would not be enforced: set spec.isolation: Accounts on the " +
         "NatsServer for an account per installation (with AuthCallout that runs NATS in " +
         "operator mode, accounts pushed live with no reload), or remove the limits";
}

std::string AllowedSubject(std::string_view prefix) { return std::string(prefix) + ".*"; }

}  // namespace switchboard::api
