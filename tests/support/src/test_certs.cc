#include "switchboard/testing/test_certs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::testing {
namespace {

bool Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = Run(argv);
  if (r.exit_code != 0) std::fprintf(stderr, "openssl failed: %s\n", r.err.c_str());
  return r.exit_code == 0;
}

std::string Hex(const unsigned char* md, unsigned len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::string Fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (cert == nullptr || X509_digest(cert, EVP_sha256(), md, &len) != 1) return "";
  return Hex(md, len);
}

}  // namespace

TestCerts MakeCerts(const std::string& dir, const std::string& name, int days) {
  TestCerts c;
  std::string ca = dir + "/ca.pem", ca_key = dir + "/ca-key.pem";
  if (!std::filesystem::exists(ca) &&
      !Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2", "-subj",
                "/CN=switchboard-test-ca"})) {
    return c;
  }
  std::string key = dir + "/" + name + "-key.pem", csr = dir + "/" + name + ".csr",
              cert = dir + "/" + name + ".pem", ext = dir + "/" + name + ".ext";
  {
    FILE* f = std::fopen(ext.c_str(), "w");
    if (f == nullptr) return c;
    std::fputs("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n", f);
    std::fclose(f);
  }
  if (!Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", csr, "-subj", "/CN=switchboard-webhook"}) ||
      !Openssl({"x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out",
                cert, "-days", std::to_string(days), "-extfile", ext})) {
    return c;
  }
  c.ca_cert = ca;
  c.cert = cert;
  c.key = key;
  c.ca_pem = ReadFile(ca);
  return c;
}

int64_t FileNotAfter(const std::string& pem_path) {
  RunResult r = Run({"openssl", "x509", "-in", pem_path, "-noout", "-enddate"});
  const std::string prefix = "notAfter=";
  if (r.exit_code != 0 || r.out.rfind(prefix, 0) != 0) return -1;
  std::string when = r.out.substr(prefix.size());
  while (!when.empty() && when.back() == '\n') when.pop_back();
  RunResult d = Run({"date", "-u", "-d", when, "+%s"});
  return d.exit_code == 0 ? std::stoll(d.out) : -1;
}

std::string FileFingerprint(const std::string& pem_path) {
  FILE* f = std::fopen(pem_path.c_str(), "r");
  if (f == nullptr) return "";
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  std::string out = Fingerprint(cert);
  X509_free(cert);
  return out;
}

std::string PeerFingerprint(int port, int max_tls_version) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  if (!ctx) return "";
  if (max_tls_version != 0) {
    SSL_CTX_set_min_proto_version(ctx.get(), 0);
    SSL_CTX_set_security_level(ctx.get(), 0);  // let old protocols be offered at all
    SSL_CTX_set_max_proto_version(ctx.get(), max_tls_version);
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  std::string out;
  if (SSL_connect(ssl.get()) == 1) {
    X509* peer = SSL_get1_peer_certificate(ssl.get());
    out = Fingerprint(peer);
    X509_free(peer);
    SSL_shutdown(ssl.get());
  }
  close(fd);
  return out;
}

}  // namespace switchboard::testing
