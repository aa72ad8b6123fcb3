// Self-signed CA certificates for tests (test data, never trusted for
// anything): PEM text that OpenSSL parses, for the code that copies or
// checks a CA bundle. Two different ones, for "another CA" cases.
#pragma once

namespace switchboard::testing {

inline constexpr char kTestCaPem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBiTCCAS+gAwIBAgIUM7CrlA97FQxtsIB/i3Ni1BVsh8owCgYIKoZIzj0EAwIw\n"
    "GjEYMBYGA1UEAwwPY2FsbG91dC10ZXN0LWNhMB4XDTI2MTIwMjAzNTU0NloXDTM2\n"
    "MTEyOTAzNTU0NlowGjEYMBYGA1UEAwwPY2FsbG91dC10ZXN0LWNhMFkwEwYHKoZI\n"
    "zj0CAQYIKoZIzj0DAQcDQgAEJnO9x2sbfYngDkwpBxFzctulUIBgDIpZoPaxkvGd\n"
    "UoNRJuPiIb5RaRuM0IisvE8HOYO3qroVt74sbt4gdQRigKNTMFEwHQYDVR0OBBYE\n"
    "FF3TsK6d+qDHqJ7ygvtsruixo5ycMB8GA1UdIwQYMBaAFF3TsK6d+qDHqJ7ygvts\n"
    "ruixo5ycMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAOvMFrRw\n"
    "lTsxmnuHtXb9CFXZRAJNJaUywCScGq28rwqWAiBRAL4X2zO151NXZVgOu7nM4lFw\n"
    "FLQ7/4RrgE4ID5J6bg==\n"
    "-----END CERTIFICATE-----\n";
inline constexpr char kOtherTestCaPem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBjjCCATOgAwIBAgIUGJCe1PFBXVTxMK7d9LBmp78g3YAwCgYIKoZIzj0EAwIw\n"
    "HDEaMBgGA1UEAwwRY2FsbG91dC10ZXN0LWNhLTIwHhcNMjYxMjAyMDM1NTQ2WhcN\n"
    "MzYxMTI5MDM1NTQ2WjAcMRowGAYDVQQDDBFjYWxsb3V0LXRlc3QtY2EtMjBZMBMG\n"
    "ByqGSM49AgEGCCqGSM49AwEHA0IABDIOruO5mdTuGD05+M++rXP5QQqAA2F+EHoM\n"
    "/BkfEQrKxEhxn/PTFhvOXeWuIMOL00J1O9OuBWIGmVPuPKIml4CjUzBRMB0GA1Ud\n"
    "DgQWBBQGhOyMM1QAEXxMf/bd2dGo0klLgjAfBgNVHSMEGDAWgBQGhOyMM1QAEXxM\n"
    "f/bd2dGo0klLgjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQD4\n"
    "/IP2IT+/H5iDI1rRQqXJu+nb2cBVfpKHIiMsnZrF4gIhAK0uf+VRkqK+sMZIRXrT\n"
    "YOp8x9bQvdvOdr8ikmAx79HZ\n"
    "-----END CERTIFICATE-----\n";

}  // namespace switchboard::testing
