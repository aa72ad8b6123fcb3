#!/usr/bin/env bash
# Builds the real Kubernetes pieces the end-to-end tests run against —
# kube-apiserver, etcd and helm — from their Go modules at pinned versions,
# into an ignored cache folder. A binary already built at the pinned version
# is reused, so a warm machine spends no time here.
#
# Usage: scripts/build-tools.sh [kube-apiserver|etcd|helm ...]   (default: all)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/tool-versions.sh"

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

build_kube_apiserver() {
  local v="$KUBE_VERSION"
  fresh kube-apiserver "$v" && return 0
  log "building kube-apiserver v$v (several minutes on a cold cache)"
  local dir="$cache/src/kube-apiserver-$v"
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
    go mod download -json "k8s.io/kubernetes@v$v" >k8s.json
    local gomod
    gomod=$(sed -n 's/.*"GoMod": "\(.*\)",*/\1/p' k8s.json)
    {
      echo "require k8s.io/kubernetes v$v"
      echo "replace ("
      grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" |
        awk -v sv="$staging_version" '{print "\t" $1 " => " $1 " " sv}'
      echo ")"
    } >>go.mod
    cat >main.go <<'GOMAIN'
// Package main only exists so `go mod tidy` keeps kube-apiserver's
// dependency graph; the binary is built from k8s.io/kubernetes directly.
package main

import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"

func main() {}
GOMAIN
    go mod tidy >/dev/null 2>&1 || go mod tidy
    go build -ldflags="$ldflags -X k8s.io/component-base/version.gitVersion=v$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor%%.*}" \
      -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
  mark kube-apiserver "$v"
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
    go mod tidy >/dev/null 2>&1 || go mod tidy
    go build -ldflags="$ldflags" -o "$bin/etcd" .
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
  GOBIN="$bin" go install -ldflags="$ldflags -X helm.sh/helm/v3/internal/version.version=v$v$kflags" "helm.sh/helm/v3/cmd/helm@v$v"
  mark helm "$v"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(etcd kube-apiserver helm)
for t in "${targets[@]}"; do
  case "$t" in
    kube-apiserver) build_kube_apiserver ;;
    etcd) build_etcd ;;
    helm) build_helm ;;
    *) echo "build-tools: unknown tool $t" >&2; exit 2 ;;
  esac
done
