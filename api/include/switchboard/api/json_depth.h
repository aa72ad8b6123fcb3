// The one bound on JSON nesting, for every reader of untrusted JSON (the
// manifest loader, the admission webhook), checked on the raw bytes before
// parsing: nlohmann's parser copes with any depth, but copying, dumping and
// walking a parsed value recurse, so `[[[[...` a megabyte deep would exhaust
// the stack.
#pragma once

#include <cstddef>
#include <string_view>

namespace switchboard::api {

// The offset of the first '[' or '{' (outside strings) that opens a level
// deeper than `max_depth`; std::string_view::npos when there is none. Does
// not check that `text` is valid JSON (the parser does that); a stream of
// several values is scanned as one text.
size_t FindNestingBeyond(std::string_view text, int max_depth);

// True when no array/object in `text` nests deeper than `max_depth`.
inline bool NestingWithin(std::string_view text, int max_depth) {
  return FindNestingBeyond(text, max_depth) == std::string_view::npos;
}

}  // namespace switchboard::api
