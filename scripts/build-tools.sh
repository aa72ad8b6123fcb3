#!/usr/bin/env bash
# Builds the real Kubernetes pieces the end-to-end tests run against —
# kube-apiserver, kube-controller-manager, etcd and helm — and, for the test
# node (scripts/node.sh), kubelet, kube-scheduler and kube-proxy — from their
# Go modules at pinned versions,
# into an ignored cache folder. A binary already built at the pinned version
# is reused, so a warm machine spends no time here. Every Go step that
# downloads (go mod download, go mod tidy, go build, go install) retries a
# transient failure (scripts/lib/retry.sh; SWITCHBOARD_RETRY_ATTEMPTS, _DELAY).
#
# Usage: scripts/build-tools.sh [TOOL ...]
#   TOOL: kube-apiserver kube-controller-manager etcd helm jwtcheck
#         nats-server-callout
#         prometheus-nats-exporter (the default set)
#         kubelet kube-scheduler kube-proxy (built only when named: the
#         test node needs them, the API-server-only tests do not)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/tool-versions.sh"
. "$root/scripts/lib/retry.sh"

cache="${SWITCHBOARD_TOOLS_DIR:-$root/.cache/tools}"
bin="$cache/bin"
mkdir -p "$bin" "$cache/src"
export GOFLAGS="${GOFLAGS:--trimpath} -mod=mod"
export CGO_ENABLED=0
ldflags="-s -w"

log() { echo "build-tools: $*" >&2; }

# stamp NAME VERSION -> true when bin/NAME was built at VERSION
fresh() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.version" 2>/dev/null)" = "$2" ]; }
mark() { echo "$2" >"$bin/.$1.version"; }

# quiet COMMAND... -> runs COMMAND, printing its output only when it fails
# (go mod tidy lists every module it downloads), so retry still quotes the
# error.
quiet() {
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -eq 0 ] || printf '%s\n' "$out" >&2
  return "$rc"
}

# A new tool: a build_NAME function that returns at once when `fresh`, runs
# each Go step that downloads through `retry "build-tools: STEP (NAME)" ...`
# and ends with `mark`; its version in tool-versions.sh; a line in the case
# below.

# The commands built from k8s.io/kubernetes; main.go imports each one's
# package so `go mod tidy` keeps all of their dependencies.
k8s_cmds=(kube-apiserver kube-controller-manager kubelet kube-scheduler kube-proxy)

# k8s_module -> prints the folder of a Go module that requires
# k8s.io/kubernetes at $KUBE_VERSION, creating it on first use. Every
# Kubernetes command builds from it, so each after the first costs little
# more than its own packages. A folder made before a command was added to
# k8s_cmds is tidied again (the existing downloads are reused).
k8s_module() {
  local v="$KUBE_VERSION"
  local dir="$cache/src/kube-apiserver-$v"
  if grep -Eq "^\s*(require )?k8s.io/kubernetes v$v\b" "$dir/go.mod" 2>/dev/null; then
    if ! grep -q 'cmd/kube-proxy/app' "$dir/main.go" 2>/dev/null; then
      k8s_main >"$dir/main.go"
      (cd "$dir" && retry "build-tools: go mod tidy (k8s.io/kubernetes v$v)" quiet go mod tidy) >&2
    fi
    echo "$dir"
    return 0
  fi
  mkdir -p "$dir"
  # k8s.io/kubernetes points its k8s.io/* staging modules at ./staging; a
  # module depending on it must pin each one to the matching v0.X.Y itself.
  local minor="${v#*.}"
  local staging_version="v0.${minor}"
  (
    cd "$dir"
    cat >go.mod <<GOMOD
module switchboard.dev/tools/kube-apiserver

go 1.24
GOMOD
    retry "build-tools: go mod download (k8s.io/kubernetes v$v)" download_json "k8s.io/kubernetes@v$v" k8s.json
    local gomod
    gomod=$(sed -n 's/.*"GoMod": "\(.*\)",*/\1/p' k8s.json)
    {
      echo "require k8s.io/kubernetes v$v"
      echo "replace ("
      grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" |
        awk -v sv="$staging_version" '{print "\t" $1 " => " $1 " " sv}'
      echo ")"
    } >>go.mod
    k8s_main >main.go
    retry "build-tools: go mod tidy (k8s.io/kubernetes v$v)" quiet go mod tidy
  ) >&2
  echo "$dir"
}

# download_json MODULE@VERSION FILE -> `go mod download -json` into FILE;
# its error (a field of the JSON) also on stderr, where retry reads it.
download_json() {
  go mod download -json "$1" >"$2" && return 0
  local rc=$?
  sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p' "$2" >&2
  return "$rc"
}

k8s_main() {
  echo '// Package main only exists so `go mod tidy` keeps the dependency graph of'
  echo '// the commands we build; the binaries are built from k8s.io/kubernetes.'
  echo 'package main'
  echo
  echo 'import ('
  local c
  for c in "${k8s_cmds[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s/app"\n' "$c"; done
  echo ')'
  echo
  echo 'func main() {}'
}

# build_k8s_cmd NAME -> bin/NAME from k8s.io/kubernetes/cmd/NAME
build_k8s_cmd() {
  local name=$1 v="$KUBE_VERSION"
  fresh "$name" "$v" && return 0
  log "building $name v$v (several minutes on a cold cache)"
  local dir minor="${v#*.}"
  dir=$(k8s_module)
  (
    cd "$dir"
    retry "build-tools: go build ($name)" go build -ldflags="$ldflags -X k8s.io/component-base/version.gitVersion=v$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor%%.*}" \
      -o "$bin/$name.tmp" "k8s.io/kubernetes/cmd/$name"
    mv "$bin/$name.tmp" "$bin/$name"
  )
  mark "$name" "$v"
}

build_etcd() {
  local v="$ETCD_VERSION"
  fresh etcd "$v" && return 0
  log "building etcd v$v"
  local dir="$cache/src/etcd-$v"
  mkdir -p "$dir"
  (
    cd "$dir"
    cat >go.mod <<GOMOD
module switchboard.dev/tools/etcd

go 1.24

require go.etcd.io/etcd/server/v3 v$v
GOMOD
    cat >main.go <<'GOMAIN'
// Package main wraps etcd's own entry point so it builds from its Go module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GOMAIN
    retry "build-tools: go mod tidy (etcd)" quiet go mod tidy
    retry "build-tools: go build (etcd)" go build -ldflags="$ldflags" -o "$bin/etcd" .
  )
  mark etcd "$v"
}

build_helm() {
  local v="$HELM_VERSION"
  fresh helm "$v" && return 0
  log "building helm v$v"
  # Helm's release builds stamp the Kubernetes version it assumes offline
  # (`helm template`, `helm lint`); without it the default is 1.20 and charts
  # with a kubeVersion constraint fail to render. Use the pinned API server's.
  local kminor="${KUBE_VERSION#*.}"
  kminor="${kminor%%.*}"
  local kflags=""
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    kflags="$kflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kminor"
  done
  GOBIN="$bin" retry "build-tools: go install (helm)" go install -ldflags="$ldflags -X helm.sh/helm/v3/internal/version.version=v$v$kflags" "helm.sh/helm/v3/cmd/helm@v$v"
  mark helm "$v"
}

# jwtcheck: test tooling for natsauth (tests/natsauth/jwtcheck), the
# reference nats-io/jwt and nkeys at the versions its go.mod pins. Rebuilt
# when its sources change.
build_jwtcheck() {
  local src="$root/tests/natsauth/jwtcheck" v
  v=$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -c1-16)
  fresh jwtcheck "$v" && return 0
  log "building jwtcheck ($v)"
  (
    cd "$src"
    retry "build-tools: go build (jwtcheck)" go build -ldflags="$ldflags" -o "$bin/jwtcheck.tmp" .
    mv "$bin/jwtcheck.tmp" "$bin/jwtcheck"
  )
  mark jwtcheck "$v"
}

# nats-server-callout: nats-server from its Go module, for the auth callout
# tests (Debian's nats-server 2.9 has no callout). Named apart so it never
# shadows Debian's nats-server on PATH.
build_nats_server() {
  local v="$NATS_SERVER_VERSION"
  fresh nats-server-callout "$v" && return 0
  log "building nats-server-callout (nats-server v$v)"
  local dir="$cache/src/nats-server-$v"
  mkdir -p "$dir"
  GOBIN="$dir" retry "build-tools: go install (nats-server-callout)" go install -ldflags="$ldflags" "github.com/nats-io/nats-server/v2@v$v"
  mv "$dir/nats-server" "$bin/nats-server-callout"
  mark nats-server-callout "$v"
}

# prometheus-nats-exporter: from its Go module at the pinned version, as
# the official NATS chart runs it beside each server. The proxy serves that
# exact version but lists none, and `go install pkg@v` asks for the list
# (deprecations), so a small module requires it and `go build` builds its
# main package.
build_nats_exporter() {
  local v="$PROMETHEUS_NATS_EXPORTER_VERSION"
  fresh prometheus-nats-exporter "$v" && return 0
  log "building prometheus-nats-exporter v$v"
  local dir="$cache/src/prometheus-nats-exporter-$v"
  rm -rf "$dir"
  mkdir -p "$dir"
  (
    cd "$dir"
    printf 'module switchboard.local/prometheus-nats-exporter\n\ngo 1.24\n\nrequire github.com/nats-io/prometheus-nats-exporter v%s\n' "$v" >go.mod
    retry "build-tools: go build (prometheus-nats-exporter)" go build \
      -ldflags="$ldflags -X main.version=$v" -o "$bin/prometheus-nats-exporter.tmp" \
      github.com/nats-io/prometheus-nats-exporter
    mv "$bin/prometheus-nats-exporter.tmp" "$bin/prometheus-nats-exporter"
  )
  mark prometheus-nats-exporter "$v"
}

# One build at a time per cache folder: parallel `cluster.sh up`s (several
# build dirs sharing a cache) wait instead of writing the same binary.
exec 8>"$cache/.build.lock"
flock 8

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(etcd kube-apiserver kube-controller-manager helm jwtcheck nats-server-callout prometheus-nats-exporter)
for t in "${targets[@]}"; do
  case "$t" in
    kube-apiserver | kube-controller-manager | kubelet | kube-scheduler | kube-proxy) build_k8s_cmd "$t" ;;
    etcd) build_etcd ;;
    helm) build_helm ;;
    jwtcheck) build_jwtcheck ;;
    nats-server-callout) build_nats_server ;;
    prometheus-nats-exporter) build_nats_exporter ;;
    *) echo "build-tools: unknown tool $t" >&2; exit 2 ;;
  esac
done
