// Making untrusted text safe for the outputs of `switchboard validate`.
// Manifests are written by anyone with access to a repository, and their
// names and values end up in messages: a line separator or a bidi control
// in a name must not forge or hide a line in a CI log.
#pragma once

#include <string>
#include <string_view>

namespace switchboard::cli::validate {

// `text` with every character a reader could not see, or that breaks or
// reorders a line, written as an escape (api::EscapeInvisible, the
// classification the rules use too): \n \r \t, other control characters
// and invalid UTF-8 bytes as \xNN, and Unicode line/paragraph separators,
// spaces other than U+0020 (U+00A0, U+2000-U+200A, ...), format characters
// (zero-width, bidi controls, U+FEFF) and the like as \uXXXX.
// Printable text, including non-ASCII letters, is unchanged.
std::string EscapeText(std::string_view text);

// A path as a URI reference (RFC 3986): every byte but the unreserved
// characters and '/' percent-encoded, so "my dir/a b.yaml" becomes
// "my%20dir/a%20b.yaml". For SARIF's artifactLocation.uri.
std::string PercentEncodePath(std::string_view path);

}  // namespace switchboard::cli::validate
