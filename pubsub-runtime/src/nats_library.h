// nats.c's process-wide state: opened on first use, nats_Close() once at exit.
#pragma once

namespace switchboard::pubsub::internal {

// Safe to call from any thread, any number of times.
void EnsureNatsLibrary();

}  // namespace switchboard::pubsub::internal
