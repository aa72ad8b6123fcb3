#include "switchboard/testing/metrics_text.h"

#include <cstdlib>
#include <string>

namespace switchboard::testing {

double MetricSum(std::string_view text, std::string_view name, std::string_view label) {
  double sum = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.size() <= name.size() || line.substr(0, name.size()) != name) continue;
    const char after = line[name.size()];
    if (after != '{' && after != ' ') continue;
    if (!label.empty() && line.find(label) == std::string_view::npos) continue;
    const size_t space = line.rfind(' ');
    sum += std::atof(std::string(line.substr(space + 1)).c_str());
  }
  return sum;
}

}  // namespace switchboard::testing
