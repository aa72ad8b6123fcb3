#!/usr/bin/env bash
# scripts/lib/retry.sh, the one retry policy of every download step, and its
# use by install-deps.sh and build-tools.sh.
#
# A real apt mirror or Go module proxy cannot be made to fail on demand, so
# the failures are injected: the commands given to `retry` are stubs that
# fail a set number of times with the error a flaky network gives, and
# install-deps.sh and build-tools.sh run with stub apt-get, dpkg-query and
# go first on PATH (nothing is installed, downloaded or built).
set -euo pipefail
: "${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
SRC=$SWITCHBOARD_SOURCE_DIR
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }
# expect_line FILE REGEX WHAT -> FILE has a line matching REGEX
expect_line() { if grep -Eq -- "$2" "$1"; then pass "$3"; else fail "$3: no line matching [$2] in:"$'\n'"$(cat "$1")"; fi; }
count() { grep -Ec -- "$2" "$1" || true; }

# No waiting between attempts: the delay is policy, not what is tested.
export SWITCHBOARD_RETRY_DELAY=0
. "$SRC/scripts/lib/retry.sh"

# flaky N FILE -> fails (exit 100, apt's code) the first N calls, counted in FILE
cat >"$WORK/flaky" <<'SH'
#!/bin/sh
n=$(($(cat "$2" 2>/dev/null || echo 0) + 1))
echo "$n" >"$2"
if [ "$n" -le "$1" ]; then
  echo "E: Failed to fetch http://deb.debian.org/debian/pool/x.deb  Temporary failure resolving 'deb.debian.org' (call $n)" >&2
  exit 100
fi
echo "fetched on call $n"
SH
chmod +x "$WORK/flaky"

# --- fails twice, then succeeds: passes, one message per failed attempt
rc=0
retry "apt-get update (test)" "$WORK/flaky" 2 "$WORK/c1" >"$WORK/out1" 2>"$WORK/err1" || rc=$?
[ "$rc" = 0 ] && pass "a command failing twice then succeeding passes" || fail "exit code $rc, want 0"
[ "$(cat "$WORK/c1")" = 3 ] && pass "it ran 3 times" || fail "ran $(cat "$WORK/c1") times, want 3"
[ "$(count "$WORK/err1" '^retry: ')" = 2 ] && pass "two retry messages" || fail "want 2 retry messages:"$'\n'"$(cat "$WORK/err1")"
expect_line "$WORK/err1" "^retry: apt-get update \(test\) failed \(attempt 1/4\): E: Failed to fetch .*\(call 1\); retrying in 0s$" \
  "first message names the step, the attempt and the error"
expect_line "$WORK/err1" "^retry: apt-get update \(test\) failed \(attempt 2/4\): .*\(call 2\); retrying in 0s$" \
  "second message quotes the second error"
expect_line "$WORK/err1" "^E: Failed to fetch .*\(call 1\)$" "the command's own stderr is shown too"
expect_line "$WORK/out1" "^fetched on call 3$" "the command's stdout is passed through"

# --- always fails: gives up after N attempts with the last error and its exit code
rc=0
SWITCHBOARD_RETRY_ATTEMPTS=3 retry "go mod download (test)" "$WORK/flaky" 99 "$WORK/c2" >/dev/null 2>"$WORK/err2" || rc=$?
[ "$rc" = 100 ] && pass "a command that always fails fails with its own exit code" || fail "exit code $rc, want 100"
[ "$(cat "$WORK/c2")" = 3 ] && pass "after SWITCHBOARD_RETRY_ATTEMPTS=3 attempts" || fail "ran $(cat "$WORK/c2") times, want 3"
expect_line "$WORK/err2" "^retry: go mod download \(test\) failed after 3 attempt\(s\): E: Failed to fetch .*\(call 3\)$" \
  "the final message names the step and quotes the last error"
[ "$(count "$WORK/err2" 'retrying in')" = 2 ] && pass "two retries announced before giving up" || fail "$(cat "$WORK/err2")"

# --- backoff: the delay doubles up to the maximum (sleep is stubbed: the
# waiting itself is not what is tested)
sleep() { echo "$1" >>"$WORK/slept"; }
rc=0
SWITCHBOARD_RETRY_ATTEMPTS=4 SWITCHBOARD_RETRY_DELAY=5 SWITCHBOARD_RETRY_MAX_DELAY=12 \
  retry "backoff (test)" "$WORK/flaky" 99 "$WORK/c3" >/dev/null 2>"$WORK/err3" || rc=$?
unset -f sleep
[ "$(tr '\n' ' ' <"$WORK/slept")" = "5 10 12 " ] && pass "waits 5, 10, 12 s (doubling, at most the maximum)" ||
  fail "waited: $(cat "$WORK/slept")"
expect_line "$WORK/err3" "attempt 3/4\): .*; retrying in 12s$" "the message says how long it waits"

# --- errors another attempt cannot fix, and misuse of retry, are not retried
rc=0
retry "missing tool (test)" "$WORK/no-such-command" >/dev/null 2>"$WORK/err4" || rc=$?
[ "$rc" = 127 ] && pass "a command that is not found fails at once (127)" || fail "exit code $rc, want 127"
expect_line "$WORK/err4" "^retry: missing tool \(test\) cannot run \(exit code 127, not retried\)" "and says it was not retried"
[ "$(count "$WORK/err4" 'retrying in')" = 0 ] && pass "no retry announced" || fail "$(cat "$WORK/err4")"

rc=0
retry "only a step name" >/dev/null 2>"$WORK/err5" || rc=$?
[ "$rc" = 2 ] && pass "retry without a command is a usage error (2)" || fail "exit code $rc, want 2"
expect_line "$WORK/err5" "^retry: usage: retry STEP COMMAND" "with a usage message"

rc=0
: >"$WORK/c6"
SWITCHBOARD_RETRY_ATTEMPTS=three retry "bad setting (test)" "$WORK/flaky" 0 "$WORK/c6" >/dev/null 2>"$WORK/err6" || rc=$?
[ "$rc" = 2 ] && [ ! -s "$WORK/c6" ] && pass "a setting that is not a number is a usage error; the command never runs" ||
  fail "exit code $rc, ran $(cat "$WORK/c6") times"
expect_line "$WORK/err6" "^retry: usage: SWITCHBOARD_RETRY_ATTEMPTS must be a whole number, not 'three'" "the message names the setting"

# --- install-deps.sh retries apt-get: stub dpkg-query (nothing installed),
# apt-get whose update fails twice, sudo (when not root) that runs its
# command.
stubs="$WORK/stubs"
mkdir -p "$stubs"
printf '#!/bin/sh\nexit 1\n' >"$stubs/dpkg-query"
cat >"$stubs/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >>"$WORK/apt.calls"
case " \$* " in
  *" update "*) exec "$WORK/flaky" 2 "$WORK/c7" ;;
esac
SH
printf '#!/bin/sh\nexec "$@"\n' >"$stubs/sudo"
chmod +x "$stubs"/*
rc=0
PATH="$stubs:$PATH" bash "$SRC/scripts/install-deps.sh" >"$WORK/out7" 2>"$WORK/err7" || rc=$?
[ "$rc" = 0 ] && pass "install-deps.sh succeeds when apt-get update fails twice" || fail "install-deps.sh: exit $rc: $(cat "$WORK/err7")"
[ "$(count "$WORK/err7" '^retry: install-deps: apt-get update and install failed \(attempt [12]/4\): E: Failed to fetch')" = 2 ] &&
  pass "install-deps.sh says twice which step failed and why" || fail "messages:"$'\n'"$(cat "$WORK/err7")"
[ "$(count "$WORK/apt.calls" ' update ')" = 3 ] && [ "$(count "$WORK/apt.calls" ' install ')" = 1 ] &&
  pass "apt-get update ran 3 times, install once" || fail "apt-get calls:"$'\n'"$(cat "$WORK/apt.calls")"

# --- build-tools.sh retries the Go download: a stub go whose `install`
# (helm from its module) fails twice like an unreachable module proxy, then
# writes a binary.
cat >"$stubs/go" <<SH
#!/bin/sh
echo "go \$*" >>"$WORK/go.calls"
[ "\$1" = install ] || exit 0
n=\$((\$(cat "$WORK/c8" 2>/dev/null || echo 0) + 1))
echo "\$n" >"$WORK/c8"
if [ "\$n" -le 2 ]; then
  echo "go: helm.sh/helm/v3@v0: Get \"https://proxy.golang.org/...\": dial tcp: lookup proxy.golang.org: i/o timeout" >&2
  exit 1
fi
printf '#!/bin/sh\n' >"\$GOBIN/helm" && chmod +x "\$GOBIN/helm"
SH
chmod +x "$stubs/go"
rc=0
PATH="$stubs:$PATH" SWITCHBOARD_TOOLS_DIR="$WORK/tools" bash "$SRC/scripts/build-tools.sh" helm >/dev/null 2>"$WORK/err8" || rc=$?
[ "$rc" = 0 ] && [ -x "$WORK/tools/bin/helm" ] && pass "build-tools.sh builds helm when the module download fails twice" ||
  fail "build-tools.sh: exit $rc: $(cat "$WORK/err8")"
[ "$(count "$WORK/err8" '^retry: build-tools: go install \(helm\) failed \(attempt [12]/4\): go: .*i/o timeout; retrying in 0s$')" = 2 ] &&
  pass "build-tools.sh names the step twice" || fail "messages:"$'\n'"$(cat "$WORK/err8")"

# ... and fails with the last error when it never comes back
rm -f "$WORK/tools/bin/helm" "$WORK/tools/bin/.helm.version"
echo -1000 >"$WORK/c8"
rc=0
SWITCHBOARD_RETRY_ATTEMPTS=2 PATH="$stubs:$PATH" SWITCHBOARD_TOOLS_DIR="$WORK/tools" \
  bash "$SRC/scripts/build-tools.sh" helm >/dev/null 2>"$WORK/err9" || rc=$?
[ "$rc" != 0 ] && [ ! -e "$WORK/tools/bin/.helm.version" ] && pass "build-tools.sh fails (exit $rc) and stamps nothing" ||
  fail "build-tools.sh: exit $rc"
expect_line "$WORK/err9" "^retry: build-tools: go install \(helm\) failed after 2 attempt\(s\): go: .*i/o timeout$" \
  "with the last error"

if [ "$FAILURES" -gt 0 ]; then
  echo "retry_test: $FAILURES failure(s)" >&2
  exit 1
fi
echo "retry_test: all passed"
