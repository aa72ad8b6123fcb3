#!/usr/bin/env bash
# `make test`: the whole suite, phase by phase, on a fresh machine or a warm
# one. Each phase's wall time is printed as it ends and kept in
# $BUILD/test-phases.txt (the README's figures come from there).
#
#   deps          Debian packages (scripts/install-deps.sh)
#   format-check  clang-format
#   build-asan    (a cold compiler cache only; see below) build-asan/
#   build         build/ (the binaries and e2e tests), while the
#                 Go tools the e2e and integration tests run build in the
#                 background: the build is CPU-bound, the tools' downloads
#                 are not, so the two overlap
#   tools         waits for the background job (its log: $BUILD/tools.log)
#   then, beside everything that follows, the test node's own tools and
#   images at nice 10 (node_tools; node_up waits for them), and two lines
#   at once:
#   e2e           the end-to-end tests against the local API server.
#                 They are the critical path (most of their time is spent
#                 waiting on servers, restarts and timeouts rather than on
#                 the CPU), so they start as soon as what they run is
#                 built, and the other line fills the CPU they leave:
#   build-asan    build-asan/ (unit + integration tests, sanitized), at a
#                 lower priority than the e2e tests (a warm cache only)
#   benchmarks    build/'s benchmarks (not in `all`), compiled only, at
#                 the same lower priority
#   unit|integration  once, under AddressSanitizer + UBSan
#   fuzz-check    the fuzz gate: committed inputs replayed; a seeded exploration reported (scripts/fuzz.sh --check)
#   node          the chart on a real node (root only; see docs/node.md;
#                 its output in $BUILD/node.log, quoted when it fails).
#                 It shares nothing with the e2e tests: the node has its
#                 own folder, bridge and API server, the e2e fixture its
#                 own cluster folder and loopback ports.
#
# Either line's failure still waits for the other, so one run reports
# every failure.
#
# Environment (the Makefile passes its variables): BUILD, ASAN_BUILD,
# CTEST_JOBS; SWITCHBOARD_WARM_CACHE_FILES (default 1000): the fewest files
# in ccache for the warm order.
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

# The default set (API server, etcd, helm, the NATS test tools): what the
# e2e and integration tests run.
background_tools() { bash scripts/build-tools.sh; }

# What only the test node needs (kubelet, kube-scheduler, kube-proxy, the
# images that are not the project's), built once the e2e tests have
# started, at the ASan build's lower priority: before them every core is
# busy with the C++ builds, which are the critical path. node_up builds
# whatever is still missing and waits for this job's locks, so this only
# moves the work into the e2e tests' idle time; its log:
# $BUILD/node-tools.log.
node_tools() {
  nice -n 10 bash scripts/build-tools.sh kubelet kube-scheduler kube-proxy &&
    if [ "$(id -u)" -eq 0 ]; then nice -n 10 bash scripts/images.sh build pause nats reloader; fi
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
# The order depends on whether the compiler cache is warm (a scheduling
# choice, never a verdict: every phase runs either way). Warm, both C++
# trees build in minutes and the e2e tests are the critical path, so they
# start right after build/. Cold, the sanitized tree is half an hour of
# both cores: built beside an e2e run it takes twice as long and becomes
# the critical path, so it is built first, while the Go tools build, as a
# whole machine's work. Measured both ways in the README.
cached=$(ccache --print-stats 2>/dev/null | awk '$1 == "files_in_cache" { print $2 }' || true)
asan_first=no
if [ "${cached:-0}" -lt "${SWITCHBOARD_WARM_CACHE_FILES:-1000}" ]; then asan_first=yes; fi
echo "test-suite: ccache holds ${cached:-no} files: $([ $asan_first = yes ] && echo "cold order (build-asan first)" || echo "warm order (e2e right after build/)")"
if [ $asan_first = yes ]; then phase build-asan m build-asan; fi
phase build m build
# Everything else, once the tools are there (the integration tests run
# some), in the background, one phase after another (the first failure
# skips what follows); its output goes to $BUILD/rest.log, quoted here
# when a phase fails. The build is at a lower priority than the e2e
# tests' servers: a compiler is throughput, the e2e tests wait on deadlines.
rest_log="$BUILD/rest.log"
run_rest() {
  { [ $asan_first = yes ] ||
    phase build-asan nice -n 10 make --no-print-directory BUILD="$BUILD" ASAN_BUILD="$ASAN_BUILD" \
      build-asan; } &&
    phase benchmarks nice -n 10 cmake --build "$BUILD" --target benchmarks &&
    phase unit+integration m test-asan &&
    phase fuzz-check m fuzz-check &&
    phase node m -o build -o tools test-node >"$BUILD/node.log" 2>&1
}
phase tools wait_tools
tools_pid=
node_tools >"$BUILD/node-tools.log" 2>&1 &
node_tools_pid=$!
run_rest >"$rest_log" 2>&1 &
rest_pid=$!
trap 'for p in $rest_pid $node_tools_pid; do kill_tree "$p"; done' EXIT
echo "test-suite: the benchmarks, unit+integration, fuzz-check and node (build-asan first when warm) run in the background (log: $rest_log); the node's tools build beside them (log: $BUILD/node-tools.log)"
# `-o build -o tools`: built already, and the background phases must not
# see this target configure or build the same tree.
e2e_rc=0
phase --quiet e2e m -o build -o tools test-e2e || e2e_rc=$?
rest_rc=0
wait "$rest_pid" || rest_rc=$?
rest_pid=
# Its failure is judged by node_up, which builds what is missing itself.
wait "$node_tools_pid" || echo "test-suite: building the node's tools in the background failed; node_up built them (its log: $BUILD/node-tools.log)"
node_tools_pid=
echo "total              $(($(date +%s) - suite_start)) s" >>"$phases"
if [ $rest_rc -ne 0 ]; then
  echo "test-suite: a background phase failed ($rest_rc); $rest_log:" >&2
  cat "$rest_log" >&2
  node_log="$BUILD/node.log"
  if grep -q '^node .*failed' "$phases" && [ -f "$node_log" ]; then
    echo "test-suite: the end of $node_log:" >&2
    tail -n 80 "$node_log" >&2
  fi
fi
echo "test-suite: background phases $([ $rest_rc -eq 0 ] && echo passed || echo FAILED), e2e $([ $e2e_rc -eq 0 ] && echo passed || echo FAILED); phases:"
cat "$phases"
[ $e2e_rc -eq 0 ] && [ $rest_rc -eq 0 ]
