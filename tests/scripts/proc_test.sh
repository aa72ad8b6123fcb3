#!/usr/bin/env bash
# scripts/lib/proc.sh: `start` fails when the child never runs its binary,
# `alive` and `stop` touch only the binary a pid file recorded; the
# ownership stamps; cluster.sh and node.sh `down` leave a state folder
# stamped by another checkout alone. Only processes this test starts
# (sleep) are ever signalled; no cluster or node is involved. And
# without_inherited_fds closes what its caller held open.
set -euo pipefail
: "${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
SRC=$SWITCHBOARD_SOURCE_DIR
WORK=$(mktemp -d)
FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }
# gone PID -> no such process, or a zombie waiting for its parent
gone() { [ ! -d "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

run="$WORK/run" logs="$WORK/logs" dir="$WORK/state" root="$SRC"
mkdir -p "$dir"
log() { echo "proc: $*" >&2; }
die() {
  log "$*"
  exit 1
}
. "$SRC/scripts/lib/proc.sh"
cleanup() {
  local n
  for n in sleeper other; do stop "$n" 10 2>/dev/null || true; done
  [ -d "$WORK/cluster-copy/run" ] && (run="$WORK/cluster-copy/run" && stop etcd 10) 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- start
rc=0
start nothing "$WORK/no-such-binary" 2>"$WORK/err1" || rc=$?
[ "$rc" != 0 ] && pass "start fails when exec fails" || fail "start of a missing binary returned 0"
grep -q "did not start" "$WORK/err1" && grep -q "failed to execute" "$WORK/err1" &&
  pass "and says so, with the log's last lines" || fail "message: $(cat "$WORK/err1")"
[ ! -e "$run/nothing.pid" ] && pass "and leaves no pid file" || fail "pid file left"

rc=0
start quitter "$(command -v false)" 2>"$WORK/err2" || rc=$?
[ "$rc" != 0 ] && pass "start fails when the binary exits at once" || fail "start of false returned 0"

rc=0
start sleeper "$(command -v sleep)" 300 || rc=$?
[ "$rc" = 0 ] && alive sleeper && pass "start of a daemon returns once it runs" || fail "sleep not alive (rc $rc)"
[ "$(cat "$run/sleeper.exe")" = "$(readlink -f "$(command -v sleep)")" ] && pass "the pid file's binary is a full path" ||
  fail ".exe holds $(cat "$run/sleeper.exe")"

# --- alive/stop only for the binary recorded
pid=$(cat "$run/sleeper.pid")
cp "$run/sleeper.pid" "$run/other.pid"
echo /usr/bin/not-sleep >"$run/other.exe"
alive other && fail "a pid running another binary counts as alive" || pass "a pid running another binary is not ours"
stop other 10
[ -d "/proc/$pid" ] && alive sleeper && pass "stop leaves a process that is not ours running" || fail "stop killed a process that is not its own"
stop sleeper 50
gone "$pid" && pass "stop ends our own process" || fail "sleep $pid still runs"

# --- stamps
stamp_claim "$dir/.owner" && stamp_mine "$dir/.owner" && pass "stamp_claim writes a stamp stamp_mine accepts" || fail "claim/mine"
grep -qx "dir=$(cd "$dir" && pwd -P) source=$(cd "$SRC" && pwd -P)" "$dir/.owner" &&
  pass "the stamp names the state folder and the checkout" || fail "stamp: $(cat "$dir/.owner")"
cp -a "$dir" "$WORK/copy"
(dir="$WORK/copy" && stamp_mine "$dir/.owner") && fail "a copied folder's stamp counts as its own" ||
  pass "a copied folder's stamp names the original"
(dir="$WORK/copy" && stamp_claim "$dir/.owner") && fail "claiming a folder stamped for another succeeded" ||
  pass "a folder stamped for another cannot be claimed"

# --- cluster.sh down on a folder another checkout made (here: a copy, with
# a pid file of a process that runs the recorded binary) stops and removes
# nothing.
c="$WORK/cluster-copy"
mkdir -p "$c/run" "$c/etcd"
echo "dir=/elsewhere/cluster source=/elsewhere" >"$c/.owner"
(run="$c/run" logs="$c/logs" && start etcd "$(command -v sleep)" 300)
victim=$(cat "$c/run/etcd.pid")
rc=0
CLUSTER_DIR="$c" bash "$SRC/scripts/cluster.sh" down 2>"$WORK/err3" || rc=$?
[ "$rc" != 0 ] && grep -q "made by another checkout or folder (dir=/elsewhere/cluster" "$WORK/err3" &&
  pass "cluster.sh down refuses a folder another checkout stamped, naming it" || fail "rc $rc: $(cat "$WORK/err3")"
[ -d "/proc/$victim" ] && [ -d "$c/etcd" ] && [ -f "$c/run/etcd.pid" ] && pass "and stops and removes nothing" ||
  fail "cluster.sh down touched another checkout's folder"
# The same folder stamped by this checkout: down stops the process and
# removes the state, keeping logs/.
(dir="$c" && rm -f "$dir/.owner" && stamp_claim "$dir/.owner")
rc=0
CLUSTER_DIR="$c" bash "$SRC/scripts/cluster.sh" down 2>"$WORK/err4" || rc=$?
[ "$rc" = 0 ] && gone "$victim" && pass "cluster.sh down stops what its own stamped folder recorded" ||
  fail "rc $rc: $(cat "$WORK/err4")"
# (.lock is the folder's lock, held while down runs)
left=$(ls -A "$c" | grep -vx -e logs -e .lock || true)
[ -z "$left" ] && pass "and removes the state and the stamp" || fail "left: $left"

# --- node.sh down on a folder another checkout stamped: refused before it
# looks at anything else.
n="$WORK/node-copy"
mkdir -p "$n/run"
echo "dir=/elsewhere/node source=/elsewhere" >"$n/.owner"
rc=0
NODE_DIR="$n" bash "$SRC/scripts/node.sh" down 2>"$WORK/err5" || rc=$?
[ "$rc" != 0 ] && grep -q "made by another checkout or folder (dir=/elsewhere/node" "$WORK/err5" &&
  [ -f "$n/.owner" ] && [ -d "$n/run" ] && pass "node.sh down refuses a folder another checkout stamped" ||
  fail "rc $rc: $(cat "$WORK/err5")"

# --- without_inherited_fds: the command sees stdin, stdout and stderr only,
# whatever the caller held open (here 3 and 11, as ctest and retry leave).
fds=$( (exec 3>/dev/null 11>/dev/null && without_inherited_fds sh -c 'ls /proc/$$/fd') | sort -n | tr '\n' ' ')
[ "$fds" = "0 1 2 " ] && pass "without_inherited_fds leaves only 0, 1 and 2 open" || fail "open fds: $fds"
out=$(without_inherited_fds sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
[ "$out" = to-stderr ] && pass "and the call's own redirections still apply" || fail "stderr: $out"

if [ "$FAILURES" -gt 0 ]; then
  echo "proc_test: $FAILURES failure(s)" >&2
  exit 1
fi
echo "proc_test: all passed"
