#include "model.h"

namespace switchboard::cli::validate {

std::string Resource::Display() const {
  std::string who = kind.empty() ? "document" : kind;
  if (!name.empty()) who += " " + (ns.empty() ? name : ns + "/" + name);
  return who;
}

size_t RunResult::Checked() const {
  size_t n = 0;
  for (const auto& r : resources) n += r.checked;
  return n;
}
size_t RunResult::Invalid() const {
  size_t n = 0;
  for (const auto& r : resources) n += r.checked && r.failed(strict);
  return n;
}
size_t RunResult::WithWarnings() const {
  size_t n = 0;
  for (const auto& r : resources) n += r.checked && !r.report.warnings.empty();
  return n;
}
size_t RunResult::Skipped() const { return resources.size() - Checked(); }
bool RunResult::IoError() const {
  for (const auto& p : problems) {
    if (p.io) return true;
  }
  return false;
}
bool RunResult::Valid() const { return problems.empty() && Invalid() == 0; }
int RunResult::ExitCode() const {
  if (IoError()) return 2;
  return Valid() ? 0 : 1;
}

}  // namespace switchboard::cli::validate
