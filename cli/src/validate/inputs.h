// Reading the inputs of `switchboard validate`: files, directories (recursive,
// *.yaml *.yml *.json, sorted so output is stable) and stdin.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "model.h"

namespace switchboard::cli::validate {

// Expands the paths into files. A missing path is a FileProblem with io=true.
std::vector<std::string> ExpandPaths(const std::vector<std::string>& paths,
                                     std::vector<FileProblem>* problems);

// Loads every document of every file (stdin for "-") into resources, setting
// identity fields and `checked`; syntax errors become FileProblems (the
// documents before the error are kept).
void LoadInputs(const std::vector<std::string>& files, std::istream& stdin_stream,
                const std::string& default_namespace, RunResult* result);

}  // namespace switchboard::cli::validate
