#!/usr/bin/env bash
# Installs the Debian packages Switchboard builds and tests with
# (`--build`: only those the C++ build needs).
# Idempotent: only missing packages are installed, so a warm machine pays
# one dpkg-query and nothing else. apt-get's downloads retry a transient
# failure (scripts/lib/retry.sh; SWITCHBOARD_RETRY_ATTEMPTS, _DELAY).
set -euo pipefail
. "$(dirname "$0")/lib/retry.sh"

# What the C++ build needs (the Dockerfile's build stage installs only this:
# `install-deps.sh --build`).
build_packages=(
  build-essential cmake ninja-build pkg-config ca-certificates
  libnats-dev libcpp-httplib-dev libboost-dev nlohmann-json3-dev libyaml-dev libssl-dev
  prometheus-cpp-dev libgtest-dev libgmock-dev libdeflate-dev zlib1g-dev libcrypt-dev
)
# What the tests, benchmarks and tools add.
test_packages=(
  ccache git curl openssl nats-server libbenchmark-dev
  clang clang-format libclang-rt-14-dev
  kubernetes-client
  gzip procps iproute2 wrk jq python3-yaml time
  prometheus  # promtool, and the server of observability_prometheus_e2e (tests/observability)
  # The test node (scripts/node.sh, scripts/images.sh): container runtime,
  # CNI plugins, image builds without a registry, Service DNS for pods.
  containerd runc containernetworking-plugins iptables conntrack buildah mmdebstrap catatonit dnsmasq-base
)

case "${1:-}" in
  --build) packages=("${build_packages[@]}") ;;
  '') packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "usage: scripts/install-deps.sh [--build]" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# kubectl may come from elsewhere on the image; only ask Debian for it when absent.
if command -v kubectl >/dev/null 2>&1; then
  tmp=()
  for p in "${missing[@]}"; do [ "$p" = kubernetes-client ] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# One step, retried whole: an index that a transient error left out of the
# update shows only at install ("Unable to locate package", a 404 for a
# superseded version), and then only a new update helps. (apt-get update
# itself tolerates a source that fails for good, as it always did.)
# Another apt run on the machine holds the dpkg lock: wait for it.
apt_install() {
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq || return
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@"
}
retry "install-deps: apt-get update and install" apt_install "${missing[@]}"
