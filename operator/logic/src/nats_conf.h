// Lexical rules for values written into a NATS config file. Private.
//
// Every value goes inside double quotes. Inside quotes the NATS lexer only
// treats `"` and `\` specially, and a newline would end the line; so the
// allowlists below exclude those, control characters, whitespace and the
// characters that are structural elsewhere in the format, and QuoteNatsString
// escapes `"` and `\` anyway as a second line of defence.
#pragma once

#include <string>
#include <string_view>

namespace switchboard::operator_logic::internal {

// Appends `"<value>"` with `\` and `"` escaped.
void AppendQuoted(std::string& out, std::string_view value);
// Appends `value` with `\` and `"` escaped (for use inside quotes).
void AppendEscaped(std::string& out, std::string_view value);

// "" when acceptable, else what is wrong (for a Rejected message).
std::string CheckUsername(std::string_view username);
std::string CheckSubjectPrefix(std::string_view prefix);
// Kubernetes object names: lowercase alphanumerics, '-' and '.', starting and
// ending alphanumeric, at most 253 characters. Safe in a `#` comment.
std::string CheckObjectName(std::string_view name);

}  // namespace switchboard::operator_logic::internal
