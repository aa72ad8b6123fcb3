// Reading the inputs of `switchboard validate`: files, directories (recursive,
// *.yaml *.yml *.json, sorted so output is stable) and stdin.
#pragma once

#include <functional>
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
// documents before the error are kept). `on_resource`, when given, sees each
// resource as soon as it is read (before the next document is parsed) and
// may take its object, so that a large input is never held parsed at once.
void LoadInputs(const std::vector<std::string>& files, std::istream& stdin_stream,
                const std::string& default_namespace, RunResult* result,
                const std::function<void(Resource&)>& on_resource = {});

}  // namespace switchboard::cli::validate
