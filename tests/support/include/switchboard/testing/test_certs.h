// Certificates for webhook tests, made with the openssl command: a CA and a
// serving certificate it signs, with SANs 127.0.0.1 and localhost (the API
// server calls https://127.0.0.1:<port>/...). Also a tiny TLS probe that
// reports which certificate a server presents.
#pragma once

#include <cstdint>
#include <string>

namespace switchboard::testing {

struct TestCerts {
  std::string ca_cert;  // PEM file paths
  std::string cert;
  std::string key;
  std::string ca_pem;  // contents of ca_cert (for caBundle)
};

// Creates ca.pem/ca-key.pem (once per dir) and <name>.pem/<name>-key.pem
// in `dir`, the serving certificate valid for `days`. Empty paths on
// failure (the error is printed).
TestCerts MakeCerts(const std::string& dir, const std::string& name = "serving", int days = 2);

// Connects to 127.0.0.1:port over TLS (no verification) limited to
// `max_tls_version` (e.g. TLS1_1_VERSION; 0 = newest) and returns the
// SHA-256 fingerprint (hex) of the server's certificate, or "" when the
// handshake fails.
std::string PeerFingerprint(int port, int max_tls_version = 0);

// SHA-256 fingerprint (hex) of the first certificate in a PEM file.
std::string FileFingerprint(const std::string& pem_path);

// notAfter of the first certificate in a PEM file in seconds since the
// epoch, as the openssl and date commands read it; -1 on failure.
int64_t FileNotAfter(const std::string& pem_path);

}  // namespace switchboard::testing
