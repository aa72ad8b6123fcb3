#include "nats_conf.h"

#include "switchboard/api/names.h"
#include "switchboard/api/values.h"

namespace switchboard::operator_logic::internal {

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

Status CheckServerValues(std::string_view ns, std::string_view name, int64_t max_payload) {
  if (std::string err = api::CheckDnsLabel(ns); !err.empty()) {
    return Status::InvalidArgument("metadata.namespace: " + api::Quote(ns) + " " + err);
  }
  if (std::string err = api::CheckDnsSubdomain(name); !err.empty()) {
    return Status::InvalidArgument("metadata.name: " + api::Quote(name) + " " + err);
  }
  if (std::string why = api::CheckMaxPayload(max_payload); !why.empty()) {
    return Status::InvalidArgument("spec.maxPayload: " + why);
  }
  return Status::Ok();
}

}  // namespace switchboard::operator_logic::internal
