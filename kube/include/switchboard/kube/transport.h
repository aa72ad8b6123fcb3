// Sending requests: the seam between request building and the network.
// NewHttpTransport is the real one (cpp-httplib over TLS); tests of code
// above the client may provide another.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/kube/config.h"
#include "switchboard/kube/request.h"

namespace switchboard::kube {

// Lets another thread end a streaming request promptly (closes its socket).
// Thread-safe; cancellation is permanent.
class Cancellation {
 public:
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }
  // Runs `fn` on Cancel() (at once if already cancelled). One hook at a time;
  // the transport installs it while a stream is open and clears it after.
  void SetHook(std::function<void()> fn);
  void ClearHook();

 private:
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::function<void()> hook_;  // guarded by mu_
};

class Transport {
 public:
  virtual ~Transport() = default;

  // One request/response with an overall deadline. Network failures give
  // kUnavailable, a passed deadline kTimeout; HTTP errors are returned as a
  // response (the caller maps them). Thread-safe.
  virtual Result<HttpResponse> Send(const HttpRequest& req, std::chrono::milliseconds timeout) = 0;

  // Streaming GET: `on_data` gets body chunks as they arrive and returns
  // false to stop. `idle_timeout` bounds the wait between chunks. Returns the
  // response status/headers (body empty when streamed, the error body when
  // status is not 2xx). Thread-safe.
  virtual Result<HttpResponse> Stream(const HttpRequest& req,
                                      const std::function<bool(std::string_view)>& on_data,
                                      std::chrono::milliseconds idle_timeout,
                                      Cancellation* cancel) = 0;
};

// The real transport. Keeps a small pool of keep-alive connections; TLS
// with the Config's CA (or none when insecure_skip_tls_verify), client
// certificate from memory, bearer token (token_file re-read on change).
Result<std::unique_ptr<Transport>> NewHttpTransport(const Config& config);

}  // namespace switchboard::kube
