#include "nats_library.h"

#include <nats/nats.h>
#include <openssl/ssl.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "nats_status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub {
namespace internal {
namespace {

// nats.c's close frees part of OpenSSL's compression-method list but
// leaves OpenSSL pointing at it (nats.c issue #904), so OpenSSL's own
// cleanup at exit frees it again and crashes, once a TLS connection was
// made. After a close, OpenSSL forgets that list (it is never used again);
// it is kept here, not freed, because nats.c left it half freed.
void ForgetFreedCompressionMethods() {
  [[maybe_unused]] static STACK_OF(SSL_COMP)* left = nullptr;
  if (STACK_OF(SSL_COMP)* old = SSL_COMP_set0_compression_methods(nullptr)) left = old;
}

// Whether nats.c is open, and how many Connections rely on it.
struct LibraryState {
  std::mutex mu;
  std::condition_variable cv;
  int users = 0;                            // guarded by mu: live NatsLibraryUse objects
  bool open = false;                        // guarded by mu: nats_Open succeeded, not closed since
  bool closing = false;                     // guarded by mu: ShutdownNats is tearing it down
  bool exit_hook = false;                   // guarded by mu: the atexit fallback is registered
  std::vector<std::shared_ptr<void>> kept;  // guarded by mu: see KeepUntilShutdown
};

LibraryState& State() {
  // Never destroyed: the atexit hook and late threads may still use it.
  static auto* state = new LibraryState;
  return *state;
}

thread_local int t_callback_depth = 0;

}  // namespace

NatsLibraryUse::NatsLibraryUse() {
  LibraryState& st = State();
  std::unique_lock lock(st.mu);
  st.cv.wait(lock, [&] { return !st.closing; });
  ++st.users;
  if (st.open) return;
  natsStatus s = nats_Open(-1);
  if (s != NATS_OK) {
    status_ = FromNats(s, "open the nats.c library");
    return;
  }
  st.open = true;
  if (!st.exit_hook) {
    st.exit_hook = true;
    // A process that never calls ShutdownNats still tells the library's
    // threads to stop at exit (without waiting for them).
    std::atexit([] {
      LibraryState& st = State();
      std::lock_guard lock(st.mu);
      if (st.open && !st.closing) {
        nats_Close();
        ForgetFreedCompressionMethods();
        st.open = false;
      }
    });
  }
}

NatsLibraryUse::~NatsLibraryUse() {
  LibraryState& st = State();
  std::lock_guard lock(st.mu);
  if (--st.users == 0) st.cv.notify_all();
}

void KeepUntilShutdown(std::shared_ptr<void> object) {
  LibraryState& st = State();
  std::lock_guard lock(st.mu);
  st.kept.push_back(std::move(object));
}

NatsCallbackScope::NatsCallbackScope() { ++t_callback_depth; }
NatsCallbackScope::~NatsCallbackScope() { --t_callback_depth; }

bool OnNatsCallbackThread() { return t_callback_depth > 0; }

}  // namespace internal

Status ShutdownNats() {
  auto& st = internal::State();
  std::unique_lock lock(st.mu);
  st.cv.wait(lock, [&] { return st.users == 0 && !st.closing; });
  if (!st.open) return Status::Ok();
  st.closing = true;
  lock.unlock();
  // Joins the library's own threads, then waits until every thread nats.c
  // started (readers, flushers, reconnect and per-subscription delivery
  // threads, detached or not) has run to its end and every nats.c object is
  // freed: each such thread holds a reference on the library until its
  // last instruction.
  natsStatus s = nats_CloseAndWait(0);
  if (s == NATS_OK) internal::ForgetFreedCompressionMethods();
  lock.lock();
  st.closing = false;
  std::vector<std::shared_ptr<void>> released;
  if (s == NATS_OK || s == NATS_NOT_INITIALIZED) {
    st.open = false;
    released.swap(st.kept);  // no nats.c thread is left to read them
  }
  st.cv.notify_all();
  lock.unlock();
  released.clear();
  // NOT_INITIALIZED: closed and freed elsewhere (nats_Close) already.
  if (s == NATS_OK || s == NATS_NOT_INITIALIZED) return Status::Ok();
  if (s == NATS_ILLEGAL_STATE) {
    return Status::FailedPrecondition(
        "nats library shutdown refused: called from a nats.c thread (a handler or callback; "
        "call it from main), or nats_Close was called elsewhere");
  }
  return internal::FromNats(s, "nats library shutdown");
}

}  // namespace switchboard::pubsub
