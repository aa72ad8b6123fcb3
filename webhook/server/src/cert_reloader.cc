#include "switchboard/webhook_server/cert_reloader.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <mutex>
#include <utility>

#include "switchboard/common/log.h"

namespace switchboard::webhook_server {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct ChainFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
struct FileClose {
  void operator()(FILE* f) const { fclose(f); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using ChainPtr = std::unique_ptr<STACK_OF(X509), ChainFree>;
using FilePtr = std::unique_ptr<FILE, FileClose>;

// One loaded certificate chain and its key; immutable once built.
struct Pair {
  X509Ptr leaf;
  ChainPtr chain;  // intermediates after the leaf, possibly empty
  PkeyPtr key;
  std::string fingerprint;
  int64_t not_after = 0;  // the leaf's, seconds since the epoch
};

// What identifies a version of a file: a Secret volume swaps a symlink (new
// inode), an editor rewrites in place (new mtime or size).
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  long mtime_sec = 0;
  long mtime_nsec = 0;
  bool operator==(const FileId&) const = default;
};

FileId Identify(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no detail from OpenSSL";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

std::string Fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (X509_digest(cert, EVP_sha256(), md, &len) != 1) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

// notAfter of `cert` in seconds since the epoch (UTC); 0 when unreadable.
int64_t NotAfter(X509* cert) {
  const ASN1_TIME* t = X509_get0_notAfter(cert);
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    ERR_clear_error();
    return 0;
  }
  return static_cast<int64_t>(timegm(&tm));
}

Result<std::shared_ptr<const Pair>> Load(const std::string& cert_file,
                                         const std::string& key_file) {
  auto pair = std::make_shared<Pair>();
  {
    FilePtr f(fopen(cert_file.c_str(), "r"));
    if (!f) return Status::InvalidArgument("--tls-cert-file " + cert_file + ": cannot open");
    pair->leaf.reset(PEM_read_X509(f.get(), nullptr, nullptr, nullptr));
    if (!pair->leaf) {
      return Status::InvalidArgument("--tls-cert-file " + cert_file + ": no PEM certificate (" +
                                     OpenSslError() + ")");
    }
    pair->chain.reset(sk_X509_new_null());
    while (X509* extra = PEM_read_X509(f.get(), nullptr, nullptr, nullptr)) {
      sk_X509_push(pair->chain.get(), extra);
    }
    ERR_clear_error();  // the loop ends on a "no start line" error
  }
  {
    FilePtr f(fopen(key_file.c_str(), "r"));
    if (!f) return Status::InvalidArgument("--tls-key-file " + key_file + ": cannot open");
    pair->key.reset(PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr));
    if (!pair->key) {
      return Status::InvalidArgument("--tls-key-file " + key_file + ": no PEM private key (" +
                                     OpenSslError() + ")");
    }
  }
  if (X509_check_private_key(pair->leaf.get(), pair->key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("--tls-key-file " + key_file +
                                   " does not match the certificate in " + cert_file);
  }
  pair->fingerprint = Fingerprint(pair->leaf.get());
  pair->not_after = NotAfter(pair->leaf.get());
  return std::shared_ptr<const Pair>(std::move(pair));
}

}  // namespace

struct CertReloader::State {
  std::string cert_file;
  std::string key_file;
  std::function<void(bool)> observer;

  mutable std::mutex mu;
  std::shared_ptr<const Pair> current;  // guarded by mu
  FileId cert_id;                       // guarded by mu: version last tried
  FileId key_id;                        // guarded by mu
  int reloads = 0;                      // guarded by mu

  std::shared_ptr<const Pair> Current() const {
    std::lock_guard<std::mutex> lock(mu);
    return current;
  }
};

CertReloader::CertReloader(std::unique_ptr<State> state) : state_(std::move(state)) {}
CertReloader::~CertReloader() = default;

Result<std::unique_ptr<CertReloader>> CertReloader::Create(std::string cert_file,
                                                           std::string key_file) {
  auto state = std::make_unique<State>();
  state->cert_id = Identify(cert_file);
  state->key_id = Identify(key_file);
  auto pair = Load(cert_file, key_file);
  if (!pair.ok()) return pair.status();
  state->current = std::move(pair).value();
  state->cert_file = std::move(cert_file);
  state->key_file = std::move(key_file);
  return std::unique_ptr<CertReloader>(new CertReloader(std::move(state)));
}

void CertReloader::SetObserver(std::function<void(bool)> observer) {
  state_->observer = std::move(observer);
}

Status CertReloader::ReloadIfChanged() {
  State& s = *state_;
  FileId cert_id = Identify(s.cert_file);
  FileId key_id = Identify(s.key_file);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (cert_id == s.cert_id && key_id == s.key_id) return Status::Ok();
    // Remember this version whatever the outcome: a broken pair is retried
    // only when the files change again, not on every handshake.
    s.cert_id = cert_id;
    s.key_id = key_id;
  }
  auto pair = Load(s.cert_file, s.key_file);
  if (!pair.ok()) {
    log::Warn("webhook", "certificate change not loaded; still serving the previous one",
              {{"error", pair.status().message()}});
    if (s.observer) s.observer(false);
    return pair.status();
  }
  std::string fingerprint = (*pair)->fingerprint;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.current = std::move(pair).value();
    ++s.reloads;
  }
  log::Info("webhook", "serving certificate reloaded",
            {{"cert_file", s.cert_file}, {"sha256", fingerprint}});
  if (s.observer) s.observer(true);
  return Status::Ok();
}

Status CertReloader::Install(SSL_CTX* ctx) {
  auto pair = state_->Current();
  if (SSL_CTX_use_certificate(ctx, pair->leaf.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, pair->key.get()) != 1) {
    return Status::Internal("SSL_CTX_use_certificate: " + OpenSslError());
  }
  // Runs in the handshake, before the server picks its certificate.
  SSL_CTX_set_cert_cb(
      ctx,
      [](SSL* ssl, void* arg) -> int {
        auto* self = static_cast<CertReloader*>(arg);
        (void)self->ReloadIfChanged();
        auto current = self->state_->Current();
        if (SSL_use_certificate(ssl, current->leaf.get()) != 1 ||
            SSL_use_PrivateKey(ssl, current->key.get()) != 1 ||
            SSL_set1_chain(ssl, current->chain.get()) != 1) {
          ERR_clear_error();
          return 0;  // abort this handshake; the next one tries again
        }
        return 1;
      },
      this);
  return Status::Ok();
}

std::string CertReloader::Fingerprint() const { return state_->Current()->fingerprint; }

int64_t CertReloader::NotAfter() const { return state_->Current()->not_after; }

int CertReloader::reloads() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->reloads;
}

}  // namespace switchboard::webhook_server
