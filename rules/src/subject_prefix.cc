// spec.nats.subjectPrefix: the namespace of one installation on a shared
// server. Subjects are prefix + "." + topic, permissions are `<prefix>.*`,
// and the operator writes the prefix into a quoted NATS config string.
#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/text.h"

namespace switchboard::rules::internal {
namespace {

bool Recommended(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

bool IsAsciiWhitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::string InvisibleMessage(const api::InvisibleChar& hidden, const std::string& quoted,
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

void CheckSubjectPrefix(std::string_view prefix, const std::string& field, Sink& sink) {
  const std::string q = Quote(prefix);
  if (prefix.empty()) {
    sink.Error("subject-prefix", field,
               "must not be empty; omit the field for the default " +
                   std::string(api::kDefaultSubjectPrefix) + " or set dot-separated tokens");
    return;
  }
  size_t errors_before = sink.errors();
  if (prefix.front() == '.') {
    sink.Error("subject-prefix", field,
               "must not start with a dot in " + q + "; remove the leading '.'");
  }
  if (prefix.back() == '.') {
    sink.Error("subject-prefix", field,
               "must not end with a dot in " + q +
                   "; remove the trailing '.' (the topic is appended as prefix + \".\" + topic)");
  }
  // Tokens, 1-based as users count them.
  size_t token = 1, start = 0, tokens = 0;
  bool reported_empty = false;
  for (size_t i = 0; i <= prefix.size(); ++i) {
    if (i < prefix.size() && prefix[i] != '.') continue;
    bool edge = (i == 0 && start == 0) || (i == prefix.size() && start == prefix.size());
    if (i == start && !edge && !reported_empty) {
      sink.Error("subject-prefix", field,
                 "token " + std::to_string(token) + " is empty in " + q +
                     "; use non-empty dot-separated tokens");
      reported_empty = true;
    }
    ++tokens;
    ++token;
    start = i + 1;
  }
  bool bad_space = false, bad_wild = false, bad_gt = false, bad_quote = false;
  bool unusual = false;
  for (unsigned char c : prefix) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      bad_space = true;
    } else if (c == '*') {
      bad_wild = true;
    } else if (c == '>') {
      bad_gt = true;
    } else if (c == '"' || c == '\\') {
      bad_quote = true;
    } else if (c != '.' && c >= 0x20 && c != 0x7f && !Recommended(c)) {
      unusual = true;
    }
  }
  if (bad_space) {
    sink.Error("subject-prefix", field,
               "must not contain whitespace in " + q +
                   "; NATS splits subjects on spaces: use '-' or '_' instead");
  }
  if (bad_wild) {
    sink.Error("subject-prefix", field,
               "must not contain the wildcard '*' in " + q +
                   "; a prefix is a literal subject: remove the '*'");
  }
  if (bad_gt) {
    sink.Error("subject-prefix", field,
               "must not contain the wildcard '>' in " + q +
                   "; a prefix is a literal subject: remove the '>'");
  }
  // ASCII whitespace has its own message above; every other character a
  // reader cannot see is named by its code point.
  if (auto hidden = api::FindInvisible(prefix, IsAsciiWhitespace)) {
    sink.Error("subject-prefix", field, InvisibleMessage(*hidden, q, "prefixes"));
  }
  if (bad_quote) {
    sink.Error("subject-prefix", field,
               "must not contain '\"' or '\\' in " + q +
                   "; they break the rendered NATS permissions: use [A-Za-z0-9_-] tokens");
  }
  if (prefix.front() == '$') {
    sink.Error(
        "subject-prefix", field,
        "must not start with '$' in " + q +
            "; $-subjects ($SYS, $JS, ...) are reserved by NATS: choose another first token");
  }
  if (prefix.size() > api::kMaxSubjectPrefixLength) {
    sink.Error("subject-prefix", field,
               "is " + std::to_string(prefix.size()) + " characters, more than " +
                   std::to_string(api::kMaxSubjectPrefixLength) +
                   "; subjects (prefix + \".\" + topic, topics up to " +
                   std::to_string(api::kTopicReserve) + " characters) must stay under " +
                   std::to_string(api::kMaxSubjectLength) + ": shorten the prefix");
  }
  if (sink.errors() != errors_before) return;
  if (tokens > api::kMaxSubjectPrefixTokens) {
    sink.Warn("subject-prefix", field,
              "has " + std::to_string(tokens) + " tokens; NATS advises at most 16 per subject " +
                  "and the topic adds one: use at most " +
                  std::to_string(api::kMaxSubjectPrefixTokens));
  }
  if (unusual) {
    sink.Warn("subject-prefix", field,
              q + " has characters outside [A-Za-z0-9_-]; NATS accepts them but tools and "
                  "monitoring may not: prefer letters, digits, '-' and '_'");
  }
}

}  // namespace switchboard::rules::internal
