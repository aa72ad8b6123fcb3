#include "nats_library.h"

#include <nats/nats.h>

#include <cstdlib>
#include <mutex>

namespace switchboard::pubsub::internal {

void EnsureNatsLibrary() {
  static std::once_flag once;
  std::call_once(once, [] {
    nats_Open(-1);
    // nats_Close tears the library down for the whole process, so it runs
    // exactly once, after main returns (every connection is gone by then).
    std::atexit([] { nats_Close(); });
  });
}

}  // namespace switchboard::pubsub::internal
