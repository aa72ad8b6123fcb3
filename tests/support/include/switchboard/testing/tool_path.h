// Where tests find the tools scripts/build-tools.sh builds (kube-apiserver,
// nats-server-callout, jwtcheck, ...): $SWITCHBOARD_TOOLS_DIR/bin, default
// $SWITCHBOARD_SOURCE_DIR/.cache/tools/bin (ctest sets the source dir for
// every test).
#pragma once

#include <cstdlib>
#include <string>

namespace switchboard::testing {

inline std::string ToolPath(const std::string& name) {
  std::string dir;
  if (const char* t = std::getenv("SWITCHBOARD_TOOLS_DIR"); t && *t) {
    dir = t;
  } else if (const char* s = std::getenv("SWITCHBOARD_SOURCE_DIR"); s && *s) {
    dir = std::string(s) + "/.cache/tools";
  }
  return dir + "/bin/" + name;
}

}  // namespace switchboard::testing
