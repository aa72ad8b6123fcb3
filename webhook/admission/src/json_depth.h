// A bound on JSON nesting, checked on the raw bytes before parsing: the
// parser itself copes with any depth, but copying, dumping and walking a
// parsed value recurse, so `[[[[...` a megabyte deep would exhaust the stack.
#pragma once

#include <string_view>

namespace switchboard::webhook_admission {

// True when no array/object in `text` nests deeper than `max_depth`
// (brackets inside strings do not count). Does not check that `text` is
// valid JSON; the parser does that.
bool NestingWithin(std::string_view text, int max_depth);

}  // namespace switchboard::webhook_admission
