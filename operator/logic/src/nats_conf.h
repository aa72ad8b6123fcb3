// Lexical rules for values written into a NATS config file. Private.
//
// Every value goes inside double quotes. Inside quotes the NATS lexer only
// treats `"` and `\` specially, and a newline would end the line; the API's
// checks (api/values.h, api/names.h) refuse those in every value written
// here, and AppendQuoted escapes `"` and `\` anyway as a second line of
// defence.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::operator_logic::internal {

// Appends `"<value>"` with `\` and `"` escaped.
void AppendQuoted(std::string& out, std::string_view value);
// Appends `value` with `\` and `"` escaped (for use inside quotes).
void AppendEscaped(std::string& out, std::string_view value);

// A NatsServer's namespace (an RFC 1123 label) and name (an RFC 1123
// subdomain), both safe in a `#` comment, and spec.maxPayload, by the API's
// one check of each (api/names.h, api/values.h): nothing the rules admit is
// refused here.
Status CheckServerValues(std::string_view ns, std::string_view name, int64_t max_payload);

}  // namespace switchboard::operator_logic::internal
