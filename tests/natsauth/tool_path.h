// Where the natsauth tests find the test tooling scripts/build-tools.sh
// builds: $SWITCHBOARD_TOOLS_DIR/bin, default <source>/.cache/tools/bin.
#pragma once

#include <cstdlib>
#include <string>

namespace switchboard::natsauth {

inline std::string TestToolPath(const std::string& name) {
  std::string dir;
  if (const char* t = std::getenv("SWITCHBOARD_TOOLS_DIR"); t && *t) {
    dir = t;
  } else if (const char* s = std::getenv("SWITCHBOARD_SOURCE_DIR"); s && *s) {
    dir = std::string(s) + "/.cache/tools";
  }
  return dir + "/bin/" + name;
}

}  // namespace switchboard::natsauth
