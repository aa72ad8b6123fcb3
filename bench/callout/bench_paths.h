// Where the callout benches find binaries: this project's (beside the
// bench's own executable) and the test tooling's
// ($SWITCHBOARD_TOOLS_DIR/bin, default <source>/.cache/tools/bin).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace switchboard::bench {

inline std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string p(buf, n > 0 ? static_cast<size_t>(n) : 0);
  return p.substr(0, p.rfind('/'));
}

inline std::string ToolsBin() {
  const char* t = std::getenv("SWITCHBOARD_TOOLS_DIR");
  return std::string(t && *t ? t : SWITCHBOARD_SOURCE_DIR "/.cache/tools") + "/bin";
}

// One --binaries entry of the memory benches: leading NAME=VALUE words are
// its environment, the rest the command.
struct Binary {
  std::string label;
  std::map<std::string, std::string> env;
  std::vector<std::string> command;
};

inline Binary ParseBinary(const std::string& entry) {
  Binary b{entry, {}, {}};
  std::stringstream in(entry);
  for (std::string word; in >> word;) {
    const size_t eq = word.find('=');
    if (b.command.empty() && eq != std::string::npos && eq > 0 && word.find('/') > eq) {
      b.env[word.substr(0, eq)] = word.substr(eq + 1);
    } else {
      b.command.push_back(word);
    }
  }
  return b;
}

}  // namespace switchboard::bench
