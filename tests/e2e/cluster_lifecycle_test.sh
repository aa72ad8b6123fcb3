#!/usr/bin/env bash
# scripts/cluster.sh on its own folder (not the shared fixture): `up` is
# idempotent, `status` reports honestly, `restart-apiserver` keeps the port,
# and `down` stops exactly the processes it started and leaves no state.
set -euo pipefail
: "${SWITCHBOARD_SOURCE_DIR:?run through ctest}"
cluster="$SWITCHBOARD_SOURCE_DIR/scripts/cluster.sh"
export CLUSTER_DIR
CLUSTER_DIR=$(mktemp -d)
FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }
trap 'bash "$cluster" down >/dev/null 2>&1 || true; rm -rf "$CLUSTER_DIR"' EXIT

rc=0
bash "$cluster" status >/dev/null || rc=$?
[ "$rc" = 3 ] && pass "status before up exits 3" || fail "status before up: rc $rc"

bash "$cluster" up --no-crds
pids=$(cat "$CLUSTER_DIR"/run/*.pid | sort | tr '\n' ' ')
port=$(sed -n 's/^APISERVER_PORT=//p' "$CLUSTER_DIR/run/ports.env")
bash "$cluster" status >/dev/null && pass "status after up exits 0" || fail "status after up"
KUBECONFIG="$CLUSTER_DIR/kubeconfig" kubectl get --raw /readyz >/dev/null && pass "kubeconfig reaches /readyz" ||
  fail "kubeconfig does not work"

bash "$cluster" up --no-crds
[ "$(cat "$CLUSTER_DIR"/run/*.pid | sort | tr '\n' ' ')" = "$pids" ] && pass "second up keeps the same processes" ||
  fail "second up restarted processes"

# gone PID -> the process has exited: no longer in /proc, or a zombie that
# its (new) parent has not reaped yet.
gone() { [ ! -d "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

old=$(cat "$CLUSTER_DIR/run/kube-apiserver.pid")
bash "$cluster" restart-apiserver
new=$(cat "$CLUSTER_DIR/run/kube-apiserver.pid")
[ "$old" != "$new" ] && gone "$old" && pass "restart-apiserver replaced the process" || fail "apiserver pid $old -> $new"
[ "$(sed -n 's/^APISERVER_PORT=//p' "$CLUSTER_DIR/run/ports.env")" = "$port" ] && pass "same port after restart" ||
  fail "port changed"
KUBECONFIG="$CLUSTER_DIR/kubeconfig" kubectl get --raw /readyz >/dev/null && pass "ready after restart" || fail "not ready after restart"

# kill_wait PID -> SIGKILL and wait until it is gone (or a zombie).
kill_wait() {
  kill -KILL "$1"
  for _ in $(seq 100); do
    gone "$1" && break
    sleep 0.1
  done
}

# The apiserver crashing alone: `up` restarts just it, on the SAME port, so
# the kubeconfig that clients (operator, config-sync, webhook) already hold
# stays valid.
kc_sum=$(sha256sum <"$CLUSTER_DIR/kubeconfig")
kill_wait "$new"
bash "$cluster" up --no-crds
KUBECONFIG="$CLUSTER_DIR/kubeconfig" kubectl get --raw /readyz >/dev/null && pass "up recovers a dead apiserver" ||
  fail "up did not recover"
[ "$(sed -n 's/^APISERVER_PORT=//p' "$CLUSTER_DIR/run/ports.env")" = "$port" ] && pass "up after a crash keeps the port" ||
  fail "up after a crash moved the API server off port $port"
[ "$(sha256sum <"$CLUSTER_DIR/kubeconfig")" = "$kc_sum" ] && pass "up after a crash leaves the kubeconfig unchanged" ||
  fail "kubeconfig rewritten after a crash"

# etcd and the API server both gone: a fresh start, still on the same port.
kill_wait "$(cat "$CLUSTER_DIR/run/kube-apiserver.pid")"
kill_wait "$(cat "$CLUSTER_DIR/run/etcd.pid")"
bash "$cluster" up --no-crds
KUBECONFIG="$CLUSTER_DIR/kubeconfig" kubectl get --raw /readyz >/dev/null && pass "up recovers dead etcd + apiserver" ||
  fail "up did not recover etcd + apiserver"
[ "$(sed -n 's/^APISERVER_PORT=//p' "$CLUSTER_DIR/run/ports.env")" = "$port" ] && pass "fresh start keeps the port" ||
  fail "fresh start moved the API server off port $port"
[ "$(sha256sum <"$CLUSTER_DIR/kubeconfig")" = "$kc_sum" ] && pass "fresh start leaves the kubeconfig unchanged" ||
  fail "kubeconfig rewritten after etcd + apiserver died"

all=$(cat "$CLUSTER_DIR"/run/*.pid)
bash "$cluster" down
for p in $all; do
  gone "$p" || fail "pid $p still running"
done
pass "down stopped $(echo $all | wc -w) processes"
left=$(ls "$CLUSTER_DIR")
[ "$left" = logs ] && pass "down leaves only logs/" || fail "left behind: $left"
rc=0
bash "$cluster" status >/dev/null || rc=$?
[ "$rc" = 3 ] && pass "status after down exits 3" || fail "status after down: rc $rc"

[ "$FAILURES" -eq 0 ] || exit 1
echo "cluster_lifecycle_test: all passed"
