// The values of the API that end up in a NATS server's config or
// permissions, each checked once: the rules (the webhook and `switchboard
// validate`), the operator's render of the include file, the callout config
// and PlanCredentials all call these, so a value one of them admits is never
// refused by another with a different rule. The CRDs (crds/) carry the same
// patterns and bounds (api/limits.h).
//
// Each check returns "" when the value is valid, otherwise what is wrong and
// the fix, in words that follow the field path ("spec.nats.subjectPrefix:
// must not ..."); the caller names the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/api/text.h"

namespace switchboard::api {

// `value` in double quotes for a message: `"` and `\` escaped, characters a
// reader cannot see escaped as EscapeInvisible does, cut after 80
// characters.
std::string Quote(std::string_view value);

// The message for a character no reader can see in a name people compare by
// eye (`what`: "prefixes", "user names"), naming its code point; `quoted`
// is Quote(value).
std::string InvisibleMessage(const InvisibleChar& hidden, const std::string& quoted,
                             std::string_view what);

// spec.nats.credentials.username: the CRD's pattern
// ^[A-Za-z0-9][-._A-Za-z0-9]*$, 1 to kMaxUsernameLength characters. Safe
// inside a quoted NATS config string.
std::string CheckUsername(std::string_view name);
// A user name as the server knows it: the spec's name, or `<name>-r<N>`
// during a rotation (the same alphabet, up to kMaxRenderedUsernameLength).
std::string CheckRenderedUsername(std::string_view name);

// spec.nats.subjectPrefix: every error, in the order the rules report them
// (empty when valid): not empty, no empty token, no whitespace, no '*' or
// '>', no character a reader cannot see, no '"' or '\', not '$'-reserved,
// at most kMaxSubjectPrefixLength characters.
std::vector<std::string> SubjectPrefixErrors(std::string_view prefix);
// The first of SubjectPrefixErrors, or "".
std::string CheckSubjectPrefix(std::string_view prefix);

// spec.maxPayload in bytes: kEngineMaxPayload (16Mi, Hatchet's engine
// needs it) to kNatsMaxPayloadLimit (64Mi, NATS's limit).
std::string CheckMaxPayload(int64_t bytes);

// spec.nats.limits.maxConnections and spec.installationLimits.maxConnections:
// kMinInstallationConnections to kMaxInstallationConnections.
std::string CheckMaxConnections(int64_t n);
// ... .maxSubscriptions (per connection): kMinInstallationSubscriptions to
// kMaxInstallationSubscriptions. (maxPayload: CheckMaxPayload.)
std::string CheckMaxSubscriptions(int64_t n);

// A backend's limit `value` (spec.nats.limits.<field>) against its server's
// default for it (NatsServer `server`'s spec.installationLimits.<field>;
// nullopt: none, so any value lowers "unlimited"): "" when it does not
// raise the default or `raise_allowed` (overrides: LowerOrRaise), else
// what is wrong and the fix.
std::string CheckLimitOverride(std::string_view field, int64_t value,
                               std::optional<int64_t> server_default, bool raise_allowed,
                               std::string_view server);

// Why limits need an account per installation, and what to set instead,
// for a server whose installations share one account (`isolation`
// Permissions; `auth_callout`: in AuthCallout mode, whose callout user
// JWT limits NATS ignores). Ends with the fix; the caller says which limits.
std::string LimitsNeedAccounts(bool auth_callout);

// "<prefix>.*": the one subject pattern an installation's user may publish
// and subscribe on. Topics are one token, so this isolates nested prefixes
// too (`a.b.*` does not match `a.b.c.x`).
std::string AllowedSubject(std::string_view prefix);

}  // namespace switchboard::api
