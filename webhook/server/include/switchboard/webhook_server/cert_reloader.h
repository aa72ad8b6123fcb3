// Serving certificate and key, reloaded when their files change, so a
// rotated certificate (cert-manager, a Secret volume's symlink swap) is served
// without a restart.
//
// How: the reloader installs an OpenSSL certificate callback on the server's
// SSL_CTX. On every TLS handshake it stat()s both files (a few microseconds,
// small next to a handshake); when either changed (inode, size or mtime) it
// loads the pair, checks that the key matches the certificate, and swaps it
// in under a lock. A pair that fails to load (for example the certificate
// written but not yet its key) is ignored: the previous pair keeps being
// served and the load is retried when the files change again. Connections
// already open keep the certificate they were handshaken with.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "switchboard/common/status.h"

typedef struct ssl_ctx_st SSL_CTX;  // NOLINT: OpenSSL's own spelling

namespace switchboard::webhook_server {

class CertReloader {
 public:
  // Loads the pair once; an error (unreadable, not PEM, key does not match)
  // names the file and the problem.
  static Result<std::unique_ptr<CertReloader>> Create(std::string cert_file, std::string key_file);
  ~CertReloader();
  CertReloader(const CertReloader&) = delete;
  CertReloader& operator=(const CertReloader&) = delete;

  // Makes `ctx` serve the current pair and reload it on change. The reloader
  // must outlive `ctx`.
  Status Install(SSL_CTX* ctx);

  // Reloads now if the files changed. Returns OK when nothing changed or the
  // reload worked. Called by the handshake callback; public for tests.
  Status ReloadIfChanged();

  // Called after every reload attempt caused by a file change (true: the
  // new pair is served). Set before Install(); used for metrics.
  void SetObserver(std::function<void(bool ok)> observer);

  // SHA-256 fingerprint (hex) of the certificate currently served.
  std::string Fingerprint() const;
  // notAfter of the certificate currently served, in seconds since the
  // epoch (0 if OpenSSL cannot read it).
  int64_t NotAfter() const;
  // Successful reloads after the first load.
  int reloads() const;

 private:
  struct State;
  explicit CertReloader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace switchboard::webhook_server
