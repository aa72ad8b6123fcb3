// Where the callout benches find binaries: this project's (beside the
// bench's own executable) and the test tooling's
// ($SWITCHBOARD_TOOLS_DIR/bin, default <source>/.cache/tools/bin).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

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

}  // namespace switchboard::bench
