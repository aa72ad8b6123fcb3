#!/usr/bin/env bash
# `make test`: the whole suite, phase by phase, on a fresh machine or a warm
# one. Each phase's wall time is printed as it ends and kept in
# $BUILD/test-phases.txt (the README's figures come from there).
#
#   deps          Debian packages (scripts/install-deps.sh)
#   format-check  clang-format
#   builds        build-asan/ (unit + integration tests, sanitized) and
#                 build/ (the binaries, e2e tests, benchmarks), while the
#                 Go tools, the test node's binaries and its non-project
#                 images build in the background: the builds are CPU-bound,
#                 the tools' downloads are not, so the two overlap
#   tools         waits for the background job (its log: $BUILD/tools.log)
#   unit|integration  once, under AddressSanitizer + UBSan
#   fuzz-check    the fuzz gate: committed inputs replayed; a seeded exploration reported (scripts/fuzz.sh --check)
#   node, e2e     at the same time: the chart on a real node (root only;
#                 see docs/node.md; its output in $BUILD/node.log, quoted
#                 when it fails) and the end-to-end tests against the local
#                 API server. Both mostly wait on servers, pods and
#                 timeouts rather than the CPU, and share nothing: the node
#                 has its own folder, bridge and API server, the e2e
#                 fixture its own cluster folder and loopback ports.
#
# Environment (the Makefile passes its variables): BUILD, ASAN_BUILD,
# CTEST_JOBS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
CTEST_JOBS=${CTEST_JOBS:-2}

mkdir -p "$BUILD"
phases="$BUILD/test-phases.txt"
: >"$phases"
suite_start=$(date +%s)

# phase NAME COMMAND... -> runs COMMAND; its wall time goes to stdout and
# $phases. The last phase passes --quiet: its time goes to $phases only, so
# ctest's summary stays the closing line.
phase() {
  local quiet=no
  [ "$1" = --quiet ] && quiet=yes && shift
  local name=$1 start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  local line
  line=$(printf '%-18s %5d s  (%s)' "$name" $(($(date +%s) - start)) "$([ $rc -eq 0 ] && echo ok || echo "failed: $rc")")
  echo "$line" >>"$phases"
  [ $quiet = yes ] || echo "test-suite: $line"
  return $rc
}

# A Makefile target: one place for each build and test command (after the
# builds, the test targets' own build and tools steps are no-ops).
m() { make --no-print-directory BUILD="$BUILD" ASAN_BUILD="$ASAN_BUILD" CTEST_JOBS="$CTEST_JOBS" "$@"; }

background_tools() {
  # The default set (API server, etcd, helm, the NATS test tools), then what
  # only the test node needs.
  bash scripts/build-tools.sh &&
    bash scripts/build-tools.sh kubelet kube-scheduler kube-proxy &&
    if [ "$(id -u)" -eq 0 ]; then bash scripts/images.sh build pause nats reloader; fi
}

wait_tools() {
  local rc=0
  wait "$tools_pid" || rc=$?
  if [ $rc -ne 0 ]; then
    echo "test-suite: the tools failed; the end of $BUILD/tools.log:" >&2
    tail -n 60 "$BUILD/tools.log" >&2
  fi
  return $rc
}

# kill_tree PID -> TERM to PID and every descendant (a Go build under the
# tools script under the subshell), children first.
kill_tree() {
  local c
  for c in $(pgrep -P "$1" || true); do kill_tree "$c"; done
  kill "$1" 2>/dev/null || true
}
# A failure anywhere stops the background job too.
tools_pid=
trap '[ -z "$tools_pid" ] || kill_tree "$tools_pid"' EXIT

phase deps bash scripts/install-deps.sh
phase format-check m format-check
background_tools >"$BUILD/tools.log" 2>&1 &
tools_pid=$!
phase build-asan m build-asan
phase build m build
phase tools wait_tools
tools_pid=
phase unit+integration m test-asan
phase fuzz-check m fuzz-check
echo "test-suite: before node and e2e, $(($(date +%s) - suite_start)) s; every phase's time: $phases"
node_log="$BUILD/node.log"
# The builds are done: `-o` keeps the two targets from configuring and
# building the same tree at once.
phase --quiet node m -o build -o tools test-node >"$node_log" 2>&1 &
node_pid=$!
trap '[ -z "$node_pid" ] || kill_tree "$node_pid"' EXIT
e2e_rc=0
phase --quiet e2e m -o build -o tools test-e2e || e2e_rc=$?
node_rc=0
wait "$node_pid" || node_rc=$?
node_pid=
echo "total              $(($(date +%s) - suite_start)) s" >>"$phases"
if [ $node_rc -ne 0 ]; then
  echo "test-suite: the node phase failed ($node_rc); the end of $node_log:" >&2
  tail -n 80 "$node_log" >&2
fi
echo "test-suite: node $([ $node_rc -eq 0 ] && echo passed || echo FAILED) (log: $node_log), e2e $([ $e2e_rc -eq 0 ] && echo passed || echo FAILED); phases:"
cat "$phases"
[ $e2e_rc -eq 0 ] && [ $node_rc -eq 0 ]
