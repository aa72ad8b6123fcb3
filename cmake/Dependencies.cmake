# Every dependency comes from a Debian package (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark QUIET)

# nats.c's CMake package points at a static library Debian does not ship.
pkg_check_modules(NATS REQUIRED IMPORTED_TARGET libnats)
# cpp-httplib is packaged as a compiled library; its pkg-config flags carry
# CPPHTTPLIB_OPENSSL_SUPPORT, without which the TLS classes do not exist.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(DEFLATE REQUIRED IMPORTED_TARGET libdeflate)
pkg_check_modules(LIBCRYPT REQUIRED IMPORTED_TARGET libcrypt)
