// The API floor: what N backends' worth of API writes costs the API server
// by themselves, from a bare client, so a benchmark can state how far the
// operator is above it in the same run against the same API server.
//
// Per backend, the kinds of writes the operator makes for one: create the
// PubSubBackend, JSON-patch a finalizer onto it, create two Secrets (the
// credentials and the env Secret), merge-patch its status, create an Event
// (6 writes including the create). From 8 threads into a namespace of its
// own, which is deleted afterwards (finalizers removed first).
#pragma once

#include <string>

#include "switchboard/kube/client.h"

namespace switchboard::bench {

struct ApiFloorResult {
  double seconds = 0;  // first write to the last
  int failures = 0;    // backends with a failed write
};

constexpr int kApiFloorWritesPerBackend = 6;

// Runs the floor for `backends` in namespace `ns` (created here; it must
// not exist) and deletes the namespace at the end.
ApiFloorResult RunApiFloor(kube::Client& c, const std::string& ns, int backends);

}  // namespace switchboard::bench
