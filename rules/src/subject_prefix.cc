// spec.nats.subjectPrefix: the namespace of one installation on a shared
// server. Subjects are prefix + "." + topic, permissions are `<prefix>.*`,
// and the operator writes the prefix into a quoted NATS config string.
#include "rules.h"
#include "switchboard/api/limits.h"
#include "switchboard/api/values.h"

namespace switchboard::rules::internal {
namespace {

bool Recommended(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

}  // namespace

// The errors are api::SubjectPrefixErrors, the render's check too; the
// warnings (token count, characters tools may not like) are the rules' own.
void CheckSubjectPrefix(std::string_view prefix, const std::string& field, Sink& sink) {
  auto errors = api::SubjectPrefixErrors(prefix);
  for (auto& error : errors) sink.Error("subject-prefix", field, std::move(error));
  if (!errors.empty()) return;
  size_t tokens = 1;
  bool unusual = false;
  for (unsigned char c : prefix) {
    if (c == '.') {
      ++tokens;
    } else if (!Recommended(c)) {
      unusual = true;
    }
  }
  const std::string q = Quote(prefix);
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
