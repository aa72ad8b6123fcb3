// The real transport over cpp-httplib. One of the two translation units of
// the tree that include httplib.h (with the pkg-config defines, TLS on); the
// other is endpoints_server.cc.
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "switchboard/kube/transport.h"
#include "token_source.h"

namespace switchboard::kube {

void Cancellation::Cancel() {
  cancelled_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  if (hook_) hook_();
}

void Cancellation::SetHook(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  hook_ = std::move(fn);
  if (cancelled_.load() && hook_) hook_();
}

void Cancellation::ClearHook() {
  std::lock_guard<std::mutex> lock(mu_);
  hook_ = nullptr;
}

namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreDeleter {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using StorePtr = std::unique_ptr<X509_STORE, StoreDeleter>;

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

BioPtr MemBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

Result<StorePtr> LoadCaStore(const std::string& pem) {
  StorePtr store(X509_STORE_new());
  BioPtr bio = MemBio(pem);
  int n = 0;
  while (true) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    if (X509_STORE_add_cert(store.get(), cert.get()) != 1) {
      return Status::InvalidArgument("CA certificate: " + OpenSslError());
    }
    ++n;
  }
  ERR_clear_error();  // the loop ends on a "no start line" error
  if (n == 0) {
    return Status::InvalidArgument(
        "certificate-authority: no PEM certificate found; expected -----BEGIN CERTIFICATE-----");
  }
  return store;
}

struct Endpoint {
  bool tls = true;
  std::string host;
  int port = 443;
  std::string base_path;  // "/k8s/clusters/c-1" behind an API proxy (Rancher); usually empty
};

Result<Endpoint> ParseServer(const std::string& server) {
  Endpoint ep;
  std::string rest;
  if (server.rfind("https://", 0) == 0) {
    rest = server.substr(8);
  } else if (server.rfind("http://", 0) == 0) {
    ep.tls = false;
    ep.port = 80;
    rest = server.substr(7);
  } else {
    return Status::InvalidArgument("server \"" + server + "\": expected https://HOST[:PORT]");
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    ep.base_path = rest.substr(slash);
    while (!ep.base_path.empty() && ep.base_path.back() == '/') ep.base_path.pop_back();
    rest = rest.substr(0, slash);
  }
  if (!rest.empty() && rest[0] == '[') {  // [ipv6]:port
    auto close = rest.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("server: bad IPv6 literal");
    ep.host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty() && rest[0] == ':') ep.port = std::atoi(rest.c_str() + 1);
  } else {
    auto colon = rest.rfind(':');
    if (colon != std::string::npos) {
      ep.host = rest.substr(0, colon);
      ep.port = std::atoi(rest.c_str() + colon + 1);
    } else {
      ep.host = rest;
    }
  }
  if (ep.host.empty() || ep.port <= 0 || ep.port > 65535) {
    return Status::InvalidArgument("server \"" + server + "\": missing host or bad port");
  }
  return ep;
}

// OpenSSL writes to sockets with write(2), which raises SIGPIPE when the peer
// (or Cancel(), which shuts the socket down) closed it; the default action
// kills the process. A library must not change the process's signal
// disposition, so SIGPIPE is blocked for the calling thread during a request
// and a SIGPIPE raised meanwhile is consumed before unblocking.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec zero{0, 0};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

template <class Rep, class Period>
void SetTimeouts(httplib::ClientImpl* c, std::chrono::duration<Rep, Period> read) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(read).count();
  if (us <= 0) us = 1000;
  c->set_read_timeout(static_cast<time_t>(us / 1000000), static_cast<time_t>(us % 1000000));
  c->set_write_timeout(static_cast<time_t>(us / 1000000), static_cast<time_t>(us % 1000000));
}

// The kubeconfig's CA as a file httplib can load. Given no CA *file*,
// httplib adds the system's default CA bundle to every client that verifies
// the server (SSL_CTX_set_default_verify_paths, even with a CA store set):
// ~0.5 MB of parsed certificates per pooled connection, and trust in CAs the
// kubeconfig never named. A memfd (nothing on disk to clean up) holding the
// PEM is that file, read through /proc/self/fd.
class CaMemFile {
 public:
  static Result<std::shared_ptr<CaMemFile>> Of(const std::string& pem) {
    int fd = memfd_create("switchboard-kube-ca", MFD_CLOEXEC);
    if (fd < 0) return Status::Internal(std::string("memfd_create: ") + strerror(errno));
    auto f = std::shared_ptr<CaMemFile>(new CaMemFile(fd));
    for (size_t done = 0; done < pem.size();) {
      ssize_t n = write(fd, pem.data() + done, pem.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::Internal(std::string("write CA memfd: ") + strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    return f;
  }
  ~CaMemFile() { close(fd_); }
  CaMemFile(const CaMemFile&) = delete;
  CaMemFile& operator=(const CaMemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  explicit CaMemFile(int fd) : fd_(fd), path_("/proc/self/fd/" + std::to_string(fd)) {}
  int fd_;
  std::string path_;
};

class HttplibTransport : public Transport {
 public:
  HttplibTransport(Config config, Endpoint ep, X509Ptr cert, PkeyPtr key,
                   std::shared_ptr<CaMemFile> ca_file)
      : config_(std::move(config)),
        ep_(std::move(ep)),
        ca_file_(std::move(ca_file)),
        cert_(std::move(cert)),
        key_(std::move(key)),
        tokens_(config_.bearer_token, config_.token_file) {}

  Result<HttpResponse> Send(const HttpRequest& req, std::chrono::milliseconds timeout) override {
    auto hreq = Build(req);
    if (!hreq.ok()) return hreq.status();
    const auto start = std::chrono::steady_clock::now();
    bool reused = false;
    auto cli = Acquire(&reused);
    if (!cli.ok()) return cli.status();
    SetTimeouts(cli->get(), timeout);
    SigpipeGuard no_sigpipe;
    httplib::Result res = (*cli)->send(hreq.value());
    if (!res && reused && req.method != "POST" &&
        (res.error() == httplib::Error::Read || res.error() == httplib::Error::Write ||
         res.error() == httplib::Error::Connection) &&
        std::chrono::steady_clock::now() - start < timeout / 2) {
      // A kept-alive connection the server closed meanwhile (e.g. it
      // restarted): retry once on a fresh one. Not for POST, which is not
      // idempotent.
      cli = NewClient();
      if (!cli.ok()) return cli.status();
      SetTimeouts(cli->get(), timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - start));
      res = (*cli)->send(hreq.value());
    }
    if (!res) {
      return NetworkError(res.error(), std::chrono::steady_clock::now() - start, timeout, req);
    }
    HttpResponse out;
    out.status = res->status;
    out.body = std::move(res->body);
    CollectWarnings(*res, &out);
    Release(std::move(cli.value()));
    return out;
  }

  Result<HttpResponse> Stream(const HttpRequest& req,
                              const std::function<bool(std::string_view)>& on_data,
                              std::chrono::milliseconds idle_timeout,
                              Cancellation* cancel) override {
    // A stream gets its own connection so Cancel() can close it without
    // touching other requests.
    auto cli = NewClient();
    if (!cli.ok()) return cli.status();
    SetTimeouts(cli->get(), idle_timeout);
    auto hreq = Build(req);
    if (!hreq.ok()) return hreq.status();
    httplib::ClientImpl* raw = cli->get();
    int status = 0;
    std::string error_body;
    bool stopped_by_caller = false;
    hreq->response_handler = [&](const httplib::Response& r) {
      status = r.status;
      return true;
    };
    hreq->content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (cancel != nullptr && cancel->cancelled()) {
        stopped_by_caller = true;
        return false;
      }
      if (status < 200 || status >= 300) {
        if (error_body.size() < 64 * 1024) error_body.append(data, n);
        return true;
      }
      if (!on_data(std::string_view(data, n))) {
        stopped_by_caller = true;
        return false;
      }
      return true;
    };
    if (cancel != nullptr) {
      if (cancel->cancelled()) return HttpResponse{200, "", {}};
      cancel->SetHook([raw] { raw->stop(); });
    }
    auto start = std::chrono::steady_clock::now();
    SigpipeGuard no_sigpipe;
    httplib::Result res = raw->send(hreq.value());
    if (cancel != nullptr) cancel->ClearHook();
    HttpResponse out;
    out.status = status;
    if (res) {
      out.status = res->status;
      CollectWarnings(*res, &out);
    }
    if (stopped_by_caller || (cancel != nullptr && cancel->cancelled())) return out;
    if (!res) {
      // The server closing a watch after timeoutSeconds is a clean end; a
      // read error after a 2xx header means the connection dropped.
      return NetworkError(res.error(), std::chrono::steady_clock::now() - start, idle_timeout, req);
    }
    out.body = std::move(error_body);
    return out;
  }

  Status Init() {
    // Fail early on unusable TLS material rather than at the first call.
    auto c = NewClient();
    if (!c.ok()) return c.status();
    Release(std::move(c.value()));
    return Status::Ok();
  }

 private:
  using ClientPtr = std::unique_ptr<httplib::ClientImpl>;

  Result<ClientPtr> NewClient() {
    ClientPtr c;
    if (ep_.tls) {
      std::unique_ptr<httplib::SSLClient> s;
      if (cert_) {
        s = std::make_unique<httplib::SSLClient>(ep_.host, ep_.port, cert_.get(), key_.get());
      } else {
        s = std::make_unique<httplib::SSLClient>(ep_.host, ep_.port);
      }
      if (!s->is_valid()) {
        return Status::InvalidArgument("TLS client setup failed (client certificate/key?): " +
                                       OpenSslError());
      }
      if (config_.insecure_skip_tls_verify) {
        s->enable_server_certificate_verification(false);
      } else if (ca_file_) {
        s->set_ca_cert_path(ca_file_->path().c_str());
      }
      c = std::move(s);
    } else {
      c = std::make_unique<httplib::ClientImpl>(ep_.host, ep_.port);
    }
    auto ct = config_.connect_timeout.count();
    c->set_connection_timeout(static_cast<time_t>(ct / 1000),
                              static_cast<time_t>(ct % 1000) * 1000);
    c->set_keep_alive(true);
    return c;
  }

  // The most recently used idle connection, unless it has been idle longer
  // than idle_connection_timeout; those (the oldest, at the front) close.
  Result<ClientPtr> Acquire(bool* reused) {
    std::vector<ClientPtr> expired;  // closed outside the lock
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      const auto oldest = std::chrono::steady_clock::now() - config_.idle_connection_timeout;
      auto fresh = std::find_if(pool_.begin(), pool_.end(),
                                [&](const Idle& i) { return i.since >= oldest; });
      for (auto it = pool_.begin(); it != fresh; ++it) expired.push_back(std::move(it->client));
      pool_.erase(pool_.begin(), fresh);
      if (!pool_.empty()) {
        ClientPtr c = std::move(pool_.back().client);
        pool_.pop_back();
        *reused = true;
        return c;
      }
    }
    *reused = false;
    return NewClient();
  }

  void Release(ClientPtr c) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (pool_.size() < kMaxIdle) pool_.push_back({std::move(c), std::chrono::steady_clock::now()});
  }

  Result<httplib::Request> Build(const HttpRequest& req) {
    httplib::Request r;
    r.method = req.method;
    r.path = ep_.base_path + req.path;
    r.body = req.body;
    r.headers.emplace("Accept", "application/json");
    r.headers.emplace("User-Agent", config_.user_agent);
    if (!req.content_type.empty()) r.headers.emplace("Content-Type", req.content_type);
    for (const auto& [k, v] : req.headers) r.headers.emplace(k, v);
    auto token = tokens_.Token();
    if (!token.ok()) return token.status();
    if (!token->empty()) r.headers.emplace("Authorization", "Bearer " + token.value());
    return r;
  }

  static void CollectWarnings(const httplib::Response& res, HttpResponse* out) {
    size_t n = res.get_header_value_count("Warning");
    for (size_t i = 0; i < n; ++i) {
      for (auto& w : ParseWarningHeader(res.get_header_value("Warning", i))) {
        out->warnings.push_back(std::move(w));
      }
    }
  }

  Status NetworkError(httplib::Error err, std::chrono::steady_clock::duration elapsed,
                      std::chrono::milliseconds timeout, const HttpRequest& req) const {
    std::string what = req.method + " " + config_.server + req.path.substr(0, req.path.find('?'));
    switch (err) {
      case httplib::Error::SSLServerVerification:
        return Status::FailedPrecondition(
            what +
            ": the API server's certificate did not verify against the configured "
            "certificate-authority (wrong CA, or the server name is not in the "
            "certificate)");
      case httplib::Error::SSLLoadingCerts:
        return Status::InvalidArgument(what + ": cannot load the CA certificates");
      case httplib::Error::ConnectionTimeout:
        return Status::Timeout(what + ": connect timed out");
      case httplib::Error::Read:
      case httplib::Error::Write:
        if (elapsed + std::chrono::milliseconds(50) >= timeout) {
          return Status::Timeout(what + ": no answer within " + std::to_string(timeout.count()) +
                                 " ms");
        }
        break;
      default:
        break;
    }
    return Status::Unavailable(what + ": " + httplib::to_string(err));
  }

  static constexpr size_t kMaxIdle = 8;

  const Config config_;
  const Endpoint ep_;
  std::shared_ptr<CaMemFile> ca_file_;  // null: no CA in the kubeconfig
  X509Ptr cert_;
  PkeyPtr key_;
  internal::TokenSource tokens_;
  std::mutex pool_mu_;
  struct Idle {
    ClientPtr client;
    std::chrono::steady_clock::time_point since;  // released
  };
  std::vector<Idle> pool_;  // idle keep-alive connections, oldest first; guarded by pool_mu_
};

}  // namespace

Result<std::unique_ptr<Transport>> NewHttpTransport(const Config& config) {
  auto ep = ParseServer(config.server);
  if (!ep.ok()) return ep.status();
  X509Ptr cert;
  PkeyPtr key;
  if (!config.client_cert_pem.empty()) {
    BioPtr cb = MemBio(config.client_cert_pem);
    cert.reset(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
    if (!cert) {
      return Status::InvalidArgument("client-certificate: not a PEM certificate: " +
                                     OpenSslError());
    }
    BioPtr kb = MemBio(config.client_key_pem);
    key.reset(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
    if (!key) {
      return Status::InvalidArgument("client-key: not a PEM private key: " + OpenSslError());
    }
  }
  std::shared_ptr<CaMemFile> ca_file;
  if (ep->tls && !config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
    auto store = LoadCaStore(config.ca_pem);  // validate early, with a clear error
    if (!store.ok()) return store.status();
    auto f = CaMemFile::Of(config.ca_pem);
    if (!f.ok()) return f.status();
    ca_file = std::move(f).value();
  }
  auto t = std::make_unique<HttplibTransport>(config, ep.value(), std::move(cert), std::move(key),
                                              std::move(ca_file));
  SB_RETURN_IF_ERROR(t->Init());
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace switchboard::kube
