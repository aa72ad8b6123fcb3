#!/usr/bin/env bash
# Builds every image the test node runs, without a registry, and imports them
# into a containerd. Nothing is pulled: the bases are made from Debian's
# packages, the binaries from Go modules or Debian packages.
#
#   debian:bookworm, debian:bookworm-slim  mmdebstrap (minbase) from Debian's
#                        archive, committed under the exact names the
#                        Dockerfile's FROM lines use (docker.io/library/...)
#   pause                Debian's catatonit (static) in `-P` (pause) mode
#   switchboard          the Dockerfile's runtime stage (Debian's buildah)
#                        with this build tree's binaries: $SWITCHBOARD_BINARY_DIR/bin,
#                        default <repo>/build/bin (the release build
#                        stage compiles the same sources again: that is
#                        `docker build .`, not the tests' job)
#   nats                 nats-server from its Go module at NATS_SERVER_VERSION
#                        (scripts/tool-versions.sh, the version the callout
#                        tests run too; the chart's nats.image.tag names the
#                        same release), on bookworm-slim (the chart's command
#                        needs /bin/sh)
#   reloader             see reloader_image below
#
# Usage: scripts/images.sh COMMAND
#   build [KEY...]     build what is missing (only the images KEY names:
#                      pause, switchboard, nats, reloader); prints nothing
#                      on stdout
#   names              print "KEY=full/name:tag" lines (pause, switchboard,
#                      nats, reloader) for the images a build produces
#   import SOCKET      build, then `ctr -n k8s.io images import` each OCI
#                      archive into the containerd at SOCKET
#
# Caching: each image is an OCI archive in $IMAGES_DIR (default
# <repo>/.cache/images) named by a hash of everything that goes into it (for
# the project image: the Dockerfile and the binaries), so a warm checkout
# rebuilds nothing and changed binaries get a new tag.
# buildah's storage (the debian bases and every Dockerfile layer) is per
# machine, like Go's build cache: $SWITCHBOARD_BUILDAH_DIR, default
# ${XDG_CACHE_HOME:-~/.cache}/switchboard/buildah (overlay driver). So a fresh
# clone on a warm machine (CI) re-exports cached layers instead of building.
#
# Downloads (mmdebstrap, Go modules) retry a transient failure
# (scripts/lib/retry.sh); so does the Dockerfile's apt-get.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib/retry.sh"
. "$root/scripts/lib/proc.sh"
. "$root/scripts/tool-versions.sh"
images="${IMAGES_DIR:-$root/.cache/images}"
mkdir -p "$images"
images=$(cd "$images" && pwd)
values="$root/charts/switchboard/values.yaml"
registry=localhost/switchboard

log() { echo "images: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

storage="${SWITCHBOARD_BUILDAH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/buildah}"
bh() {
  buildah --root "$storage/root" --runroot "$storage/run" --storage-driver overlay "$@"
}

# chart_value DOTTED.PATH -> the scalar at that path of values.yaml (the
# versions the chart names), read with a YAML parser (python3-yaml, from
# install-deps.sh); fails with a message when the path is missing or not a
# scalar.
chart_value() {
  python3 - "$values" "$1" <<'PY'
import sys
import yaml

path, key = sys.argv[1], sys.argv[2]
with open(path) as f:
    v = yaml.safe_load(f)
for part in key.split("."):
    if not isinstance(v, dict) or part not in v:
        sys.exit(f"images: {path} has no {key}")
    v = v[part]
if v is None or isinstance(v, (dict, list)):
    sys.exit(f"images: {path}: {key} is not a scalar")
print(v)
PY
}

# One nats-server version for the tools and the node's image; the chart's
# default upstream tag (nats.image.tag, e.g. 2.15.3-alpine) must name the
# same release, which tests/e2e/chart_test.sh checks.
NATS_VERSION=${NATS_SERVER_VERSION:?scripts/tool-versions.sh sets NATS_SERVER_VERSION}
RELOADER_VERSION=$(chart_value nats.reloader.tag) || die "cannot read nats.reloader.tag from $values"
[ -n "$RELOADER_VERSION" ] || die "empty nats.reloader.tag in $values"

# The binaries the project image carries, from this build tree (ctest sets
# SWITCHBOARD_BINARY_DIR; default <repo>/build).
binaries_dir="${SWITCHBOARD_BINARY_DIR:-$root/build}/bin"
project_binaries=(switchboard-operator switchboard-webhook switchboard-authorizer switchboard)

# project_hash -> sha256 of what goes into the project image: the
# Dockerfile (its runtime stage) and the binaries.
project_hash() {
  local b
  for b in "${project_binaries[@]}"; do
    [ -x "$binaries_dir/$b" ] ||
      die "$binaries_dir/$b missing: build it first (cmake --build build --target ${project_binaries[*]})"
  done
  (
    cd "$binaries_dir"
    sha256sum "$root/Dockerfile" | cut -d' ' -f1
    sha256sum "${project_binaries[@]}"
  ) | sha256sum | cut -c1-16
}

BASE_KEY=bookworm-minbase-1
PAUSE_KEY=catatonit-1
NATS_KEY="$NATS_VERSION-1"
RELOADER_KEY="$RELOADER_VERSION-standin-1"

names() {
  echo "pause=$registry/pause:$PAUSE_KEY"
  echo "switchboard=$registry/switchboard:$(project_hash)"
  echo "nats=$registry/nats:$NATS_KEY"
  echo "reloader=$registry/nats-server-config-reloader:$RELOADER_KEY"
}

# archive NAME -> path of the OCI archive for a full image name
archive() { echo "$images/$(echo "$1" | tr '/:' '__').oci.tar"; }

# export_oci NAME -> buildah image NAME as an OCI archive whose index.json
# carries io.containerd.image.name, the annotation `ctr images import` names
# images by (the CRI looks images up under their full name).
export_oci() {
  local name=$1 out tmp
  out=$(archive "$name")
  tmp=$(mktemp -d "$images/.export.XXXXXX")
  bh push --quiet "$name" "oci:$tmp/layout:$name" >/dev/null
  jq --arg n "$name" '.manifests |= map(.annotations += {"io.containerd.image.name": $n})' \
    "$tmp/layout/index.json" >"$tmp/index.json"
  mv "$tmp/index.json" "$tmp/layout/index.json"
  tar -C "$tmp/layout" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf "$tmp"
}

have() { bh inspect --type image "$1" >/dev/null 2>&1; }

# need_space DIR MIB WHAT -> dies, naming DIR and what needs it, when the
# file system of DIR has less than MIB MiB free.
need_space() {
  local free
  free=$(df -Pm "$1" | awk 'NR == 2 { print $4 }')
  [ -n "$free" ] && [ "$free" -ge "$2" ] && return 0
  die "$1 has ${free:-an unknown number of} MiB free; $3 needs at least $2 MiB: free some space (df -h $1)"
}

# bootstrap_base DIR -> DIR/rootfs.tar from mmdebstrap. Its full output goes
# to DIR/mmdebstrap.log; on failure the log's last lines (apt's own error:
# a 404, a hash sum mismatch, no space) are printed, where --quiet printed
# only "apt download failed".
bootstrap_base() {
  local dir=$1
  rm -f "$dir/rootfs.tar"
  # Without our fds: apt's hook is `cat >&N` run by dash (see
  # without_inherited_fds).
  if without_inherited_fds mmdebstrap --variant=minbase --mode=root --format=tar \
    --aptopt='Acquire::Retries "3"' bookworm "$dir/rootfs.tar" </dev/null >"$dir/mmdebstrap.log" 2>&1; then
    return 0
  fi
  log "mmdebstrap failed; the last lines of its log:"
  grep -v '^I: \|^Get:' "$dir/mmdebstrap.log" | tail -n 40 | sed 's/^/  /' >&2
  df -h "${TMPDIR:-/tmp}" "$dir" | sed 's/^/  /' >&2
  tail -n 1 "$dir/mmdebstrap.log" >&2
  return 1
}

# ---------------------------------------------------------------- bases

# The Dockerfile says FROM debian:bookworm and debian:bookworm-slim; the
# CRI and buildah expand those to docker.io/library/debian:... . Both come
# from one mmdebstrap (minbase: apt, bash, coreutils, no recommends); slim
# drops docs, man pages and locales and tells dpkg to keep them out, as
# Debian's slim images do.
build_bases() {
  have "docker.io/library/debian:bookworm" && have "docker.io/library/debian:bookworm-slim" && return 0
  command -v mmdebstrap >/dev/null || die "mmdebstrap missing (scripts/install-deps.sh installs it)"
  log "making debian:bookworm from Debian's packages (mmdebstrap, about 2 min)"
  local tmp c
  tmp=$(mktemp -d "$images/.base.XXXXXX")
  # A full disk fails mmdebstrap within seconds as "apt download failed",
  # every attempt alike: say so before trying.
  need_space "${TMPDIR:-/tmp}" 1024 "mmdebstrap's chroot"
  need_space "$images" 1024 "the base image's tarball"
  mkdir -p "$storage"
  need_space "$storage" 2048 "buildah's storage"
  # apt inside mmdebstrap retries each file itself (the option stays in the
  # bases' apt.conf.d, so the Dockerfile's apt-get does too); retry reruns
  # the whole bootstrap when that was not enough, over about two minutes
  # (six attempts): a mirror caught mid-sync answers 404s or hash sum
  # mismatches for longer than the default half minute.
  SWITCHBOARD_RETRY_ATTEMPTS=${SWITCHBOARD_RETRY_ATTEMPTS:-6} \
    retry "images: mmdebstrap bookworm" bootstrap_base "$tmp"
  c=$(bh from scratch)
  bh add "$c" "$tmp/rootfs.tar" / >/dev/null
  bh config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  bh commit --quiet "$c" docker.io/library/debian:bookworm >/dev/null
  bh rm "$c" >/dev/null
  c=$(bh from docker.io/library/debian:bookworm)
  bh run --isolation chroot "$c" -- sh -c '
    rm -rf /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/* /usr/share/groff/* /usr/share/lintian/*
    printf "%s\n" "path-exclude /usr/share/doc/*" "path-include /usr/share/doc/*/copyright" \
      "path-exclude /usr/share/man/*" "path-exclude /usr/share/info/*" "path-exclude /usr/share/locale/*" \
      "path-exclude /usr/share/groff/*" "path-exclude /usr/share/lintian/*" >/etc/dpkg/dpkg.cfg.d/slim'
  bh commit --quiet "$c" docker.io/library/debian:bookworm-slim >/dev/null
  bh rm "$c" >/dev/null
  rm -rf "$tmp"
}

# ---------------------------------------------------------------- images

build_pause() {
  local name=$1 c
  [ -f "$(archive "$name")" ] && return 0
  log "building $name (catatonit -P)"
  # Debian builds catatonit statically: the binary alone is the image.
  [ -x /usr/bin/catatonit ] || die "catatonit missing (scripts/install-deps.sh installs it)"
  ! ldd /usr/bin/catatonit >/dev/null 2>&1 ||
    die "/usr/bin/catatonit is not statically linked; the pause image has no libc"
  c=$(bh from scratch)
  bh copy "$c" /usr/bin/catatonit /pause >/dev/null
  bh config --entrypoint '["/pause","-P"]' --user 65535:65535 "$c"
  bh commit --quiet "$c" "$name" >/dev/null
  bh rm "$c" >/dev/null
  export_oci "$name"
}

# go_build MODULE VERSION PACKAGE OUT -> a static binary from a Go module
go_build() {
  local module=$1 version=$2 pkg=$3 out=$4 dir
  dir="$images/src/$(basename "$pkg")-$version"
  mkdir -p "$dir"
  (
    cd "$dir"
    [ -f go.mod ] || printf 'module switchboard.dev/images/%s\n\ngo 1.24\n\nrequire %s %s\n' \
      "$(basename "$pkg")" "$module" "$version" >go.mod
    GOFLAGS="-trimpath -mod=mod" CGO_ENABLED=0 retry "images: go build ($module $version)" \
      go build -ldflags="-s -w" -o "$out" "$pkg"
  ) >&2
}

build_nats() {
  local name=$1 tmp c
  [ -f "$(archive "$name")" ] && return 0
  build_bases
  log "building $name (nats-server v$NATS_VERSION from its Go module)"
  tmp=$(mktemp -d "$images/.nats.XXXXXX")
  go_build github.com/nats-io/nats-server/v2 "v$NATS_VERSION" github.com/nats-io/nats-server/v2 "$tmp/nats-server"
  c=$(bh from docker.io/library/debian:bookworm-slim)
  bh copy "$c" "$tmp/nats-server" /usr/local/bin/nats-server >/dev/null
  bh config --entrypoint '["/usr/local/bin/nats-server"]' --cmd '--config /etc/nats/nats.conf' "$c"
  bh commit --quiet "$c" "$name" >/dev/null
  bh rm "$c" >/dev/null
  export_oci "$name"
  rm -rf "$tmp"
}

# The chart's reloader is natsio/nats-server-config-reloader, built from the
# github.com/nats-io/nack Go module, which the Go module proxy reachable
# here refuses (403 "not available"). The node runs a stand-in that takes
# the same flags the chart passes (-pid FILE, -config FILE ...) and does
# what the reloader does: when a config file's content changes, send SIGHUP
# to the pid in the pid file. It is a test fixture, not a release image.
build_reloader() {
  local name=$1 tmp c
  [ -f "$(archive "$name")" ] && return 0
  build_bases
  log "building $name (stand-in with the reloader's flags)"
  tmp=$(mktemp -d "$images/.reloader.XXXXXX")
  cat >"$tmp/reloader" <<'SH'
#!/bin/sh
# Stand-in for nats-server-config-reloader (same flags): SIGHUP the pid in
# -pid FILE whenever one of the -config FILEs changes content.
set -u
pidfile="" configs=""
while [ $# -gt 0 ]; do
  case "$1" in
    -pid) pidfile=$2; shift 2 ;;
    -config) configs="$configs $2"; shift 2 ;;
    *) echo "reloader: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -n "$pidfile" ] && [ -n "$configs" ] || { echo "reloader: need -pid FILE and -config FILE" >&2; exit 2; }
trap 'exit 0' TERM INT
sums() { for f in $configs; do sha256sum "$f" 2>/dev/null || echo "missing $f"; done; }
last=$(sums)
echo "reloader: watching$configs"
while :; do
  sleep 1
  now=$(sums)
  [ "$now" = "$last" ] && continue
  if [ -s "$pidfile" ] && kill -HUP "$(cat "$pidfile")" 2>/dev/null; then
    echo "reloader: config changed; sent SIGHUP to $(cat "$pidfile")"
    last=$now
  fi
done
SH
  chmod 755 "$tmp/reloader"
  c=$(bh from docker.io/library/debian:bookworm-slim)
  bh copy "$c" "$tmp/reloader" /usr/local/bin/nats-server-config-reloader >/dev/null
  bh config --entrypoint '["/usr/local/bin/nats-server-config-reloader"]' "$c"
  bh commit --quiet "$c" "$name" >/dev/null
  bh rm "$c" >/dev/null
  export_oci "$name"
  rm -rf "$tmp"
}

# The Dockerfile's runtime stage (`--target runtime`: the shipped image
# without its binaries; the build stage is never built) with this build
# tree's binaries on top, stripped as the build stage strips them: the same
# Debian, the same shared libraries. chroot isolation with the host's
# network, so the stage's apt-get reaches Debian's archive as `docker build`
# would.
build_switchboard() {
  local name=$1 tmp c
  [ -f "$(archive "$name")" ] && return 0
  build_bases
  log "building $name (the Dockerfile's runtime stage + $binaries_dir)"
  bh bud --quiet --isolation chroot --network host --layers --pull=never \
    --target runtime -f "$root/Dockerfile" -t "$registry/switchboard-runtime:latest" "$root" >&2
  tmp=$(mktemp -d)
  local b
  for b in "${project_binaries[@]}"; do strip -o "$tmp/$b" "$binaries_dir/$b"; done
  c=$(bh from "$registry/switchboard-runtime:latest")
  bh copy --chown 0:0 "$c" "${project_binaries[@]/#/$tmp/}" /usr/local/bin/ >/dev/null
  bh commit --quiet "$c" "$name" >/dev/null
  bh rm "$c" >/dev/null
  rm -rf "$tmp"
  export_oci "$name"
  # Old tags of the project image are superseded: drop their archives and
  # their tags in the storage (the cached layers of the Dockerfile's steps
  # stay; `rm -rf` the storage folder to reclaim all of it).
  local old
  for old in "$images"/localhost_switchboard_switchboard_*.oci.tar; do
    [ -e "$old" ] && [ "$old" != "$(archive "$name")" ] && rm -f "$old"
  done
  for old in $(bh images --format '{{.Name}}:{{.Tag}}' 2>/dev/null | grep "^$registry/switchboard:" || true); do
    [ "$old" = "$name" ] || bh rmi "$old" >/dev/null 2>&1 || true
  done
  return 0
}

# cmd_build [KEY...] -> builds the images KEY names (all when none)
cmd_build() {
  command -v buildah >/dev/null || die "buildah missing (scripts/install-deps.sh installs it)"
  local line key name want=" $* "
  for key in "$@"; do
    case $key in pause | switchboard | nats | reloader) ;; *) die "unknown image $key (pause, switchboard, nats, reloader)" ;; esac
  done
  # One build at a time per cache folder.
  exec 8>"$images/.lock"
  flock 8
  # fd 3, not stdin: buildah reads stdin and would swallow the list.
  while IFS= read -r -u 3 line; do
    key=${line%%=*}
    name=${line#*=}
    [ $# -eq 0 ] || [[ $want == *" $key "* ]] || continue
    "build_$key" "$name" </dev/null
  done 3< <(names)
}

cmd_import() {
  local sock=${1:?usage: images.sh import SOCKET}
  cmd_build
  local line name
  while IFS= read -r -u 3 line; do
    name=${line#*=}
    # (the list is read whole: `grep -q` closing a pipe early would fail the
    # pipeline under pipefail)
    grep -qxF "$name" <<<"$(ctr --address "$sock" -n k8s.io images ls -q)" && continue
    ctr --address "$sock" -n k8s.io images import "$(archive "$name")" >&2
    grep -qxF "$name" <<<"$(ctr --address "$sock" -n k8s.io images ls -q)" ||
      die "import of $name did not register that name"
  done 3< <(names)
}

case "${1:-}" in
  build) shift; cmd_build "$@" ;;
  names) names ;;
  import) shift; cmd_import "$@" ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
