#include "nats_conf.h"

#include "switchboard/api/limits.h"

namespace switchboard::operator_logic::internal {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

}  // namespace

void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
}

void AppendQuoted(std::string& out, std::string_view value) {
  out.push_back('"');
  AppendEscaped(out, value);
  out.push_back('"');
}

std::string CheckUsername(std::string_view u) {
  if (u.empty()) return "is empty; set a user name";
  // The API's limit plus a rotation's "-r<N>".
  if (u.size() > api::kMaxRenderedUsernameLength) {
    return "is longer than " + std::to_string(api::kMaxRenderedUsernameLength) +
           " characters; use a shorter user name";
  }
  for (char c : u) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.' && c != '@' && c != '+' && c != '=') {
      return "\"" + Printable(u) +
             "\" contains a character outside [A-Za-z0-9-_.@+=]; use only those";
    }
  }
  return "";
}

std::string CheckSubjectPrefix(std::string_view p) {
  if (p.empty()) return "is empty; use dot-separated tokens like hatchet.team-a";
  if (p.size() > api::kMaxSubjectPrefixLength) {
    return "is longer than " + std::to_string(api::kMaxSubjectPrefixLength) +
           " characters; leave room for topic names";
  }
  size_t token_start = 0;
  for (size_t i = 0; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '.') {
      if (i == token_start) {
        return "\"" + Printable(p) + "\" has an empty token; use non-empty dot-separated tokens";
      }
      token_start = i + 1;
      continue;
    }
    char c = p[i];
    if (c == '*' || c == '>') {
      return "\"" + Printable(p) + "\" contains a wildcard ('*' or '>'); use literal tokens";
    }
    // Inside a double-quoted NATS string only `"`, `\` and line breaks are
    // special: those, whitespace and control characters never. UTF-8 is fine.
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == '"' || c == '\\') {
      return "\"" + Printable(p) +
             "\" contains whitespace, a control character, '\"' or '\\'; use letters, digits, "
             "'-' and '_'";
    }
  }
  // $-subjects ($SYS, $JS, ...) belong to NATS itself.
  if (p.front() == '$') {
    return "\"" + Printable(p) + "\" starts with '$', reserved by NATS; choose another first token";
  }
  return "";
}

std::string CheckObjectName(std::string_view n) {
  if (n.empty()) return "is empty";
  if (n.size() > api::kMaxDnsSubdomainLength) {
    return "is longer than " + std::to_string(api::kMaxDnsSubdomainLength) + " characters";
  }
  for (char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) {
      return "\"" + Printable(n) + "\" is not a Kubernetes object name";
    }
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(n.front()) || !alnum(n.back())) {
    return "\"" + Printable(n) + "\" is not a Kubernetes object name";
  }
  return "";
}

}  // namespace switchboard::operator_logic::internal
