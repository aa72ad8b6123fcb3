// The checks of `switchboard validate` without the command line: load the
// inputs and the context, run the rule set over everything at once. The
// benchmark calls this too, so it measures the command's own code path.
#pragma once

#include <istream>

#include "model.h"

namespace switchboard::cli::validate {

RunResult Check(const Options& options, std::istream& stdin_stream);

}  // namespace switchboard::cli::validate
