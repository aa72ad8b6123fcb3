#!/usr/bin/env bash
# Teardown owns what it removes. With the node up from this checkout, a
# second checkout of the same commit, with its own NODE_DIR, runs
# `node.sh up` (refused: one node per machine) and `node.sh down`; the
# first node keeps working: bridge, forward chain, kube-proxy's rules,
# API server, a running pod reached through the bridge and its Service, and
# a new pod. The guard routes (unreachable, beneath the bridge's) exist
# while the node is up, and in a network namespace of this test, where
# node.sh's own guard_up runs beside a bridge that is then deleted, a
# lookup of a pod or Service address is refused instead of routed.
#
# Traffic: only `ip route get` (no packet) and connections to the pod's
# and the Service's address after `ip route get` showed they go out on the
# node's bridge.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# The node's names and addresses, as node.sh defines them.
eval "$(NODE_SH_SOURCE_ONLY=1 bash -c '. "$1" && declare -p BRIDGE NODE_IP POD_CIDR SERVICE_CIDR FWD_CHAIN GUARD_METRIC NET_STAMP' \
  _ "$SRC/scripts/node.sh")"

second="$WORK/second"
guard_ns="sbguard-$$"
cleanup() {
  ip netns del "$guard_ns" 2>/dev/null || true
  if [ -d "$second" ]; then
    git -C "$SRC" worktree remove --force "$second" >/dev/null 2>&1 || true
    git -C "$SRC" worktree prune >/dev/null 2>&1 || true
  fi
  teardown
}
trap cleanup EXIT

node_namespace
ns=$NS

# nats_pod NAME -> a pod running nats-server on 4222 (the node's nats image),
# Ready once the kubelet reached its port through the bridge
nats_pod() {
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  containers:
    - name: nats
      image: $SWITCHBOARD_IMAGE_NATS
      imagePullPolicy: Never
      args: ["-a", "0.0.0.0", "-p", "4222"]
      readinessProbe: {tcpSocket: {port: 4222}, periodSeconds: 1}
YAML
}
pod_ready() { [ "$(kubectl -n "$ns" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }

# on_bridge ADDR -> the kernel sends ADDR out on the node's bridge
on_bridge() { ip -4 route get "$1" 2>/dev/null | grep -q " dev $BRIDGE "; }

# nats_answers ADDR -> connects to ADDR:4222 (only after on_bridge ADDR)
# and reads the INFO line nats-server greets with
nats_answers() {
  on_bridge "$1" || return 1
  [ "$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/4222" && head -c 4 <&3' _ "$1" 2>/dev/null)" = INFO ]
}

nats_pod before
kubectl -n "$ns" expose pod before --port 4222 >/dev/null
wait_until 180 pod_ready before && pass "a pod is Ready on the node" || {
  fail "pod not Ready"
  dump "$ns"
}
pod_ip=$(kubectl -n "$ns" get pod before -o jsonpath='{.status.podIP}')
svc_ip=$(kubectl -n "$ns" get service before -o jsonpath='{.spec.clusterIP}')
nats_answers "$pod_ip" && pass "the pod answers at $pod_ip through $BRIDGE" || fail "pod $pod_ip does not answer"
wait_until 30 nats_answers "$svc_ip" && pass "its Service answers at $svc_ip" || fail "Service $svc_ip does not answer"

# --- the guard routes while the node is up
guards=$(ip -4 route show type unreachable)
for cidr in "$POD_CIDR" "$SERVICE_CIDR"; do
  grep -q "^unreachable $cidr .*metric $GUARD_METRIC" <<<"$guards" && pass "unreachable route for $cidr beneath the bridge's" ||
    fail "no unreachable route for $cidr:"$'\n'"$guards"
done
unused_pod=${POD_CIDR%.*}.253 # outside the CNI's range (.10-.250)
unused_svc=${SERVICE_CIDR%.*}.254
for a in "$unused_pod" "$unused_svc"; do
  route=$(ip -4 route get "$a" 2>&1 || true)
  on_bridge "$a" && ! grep -q ' via ' <<<"$route" && pass "$a goes to $BRIDGE, not to a gateway" || fail "route of $a: $route"
done

# In a namespace of this test: node.sh's guard beside a bridge with the
# node's addresses; once the bridge is gone, lookups are refused.
ip netns add "$guard_ns"
guard_out=$(ip netns exec "$guard_ns" bash -c '
  set -e
  NODE_SH_SOURCE_ONLY=1 NODE_DIR="$1" . "$2/scripts/node.sh"
  ip link add "$BRIDGE" type bridge
  ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE"
  guard_up
  echo "with: $(ip -4 route get "$3" | head -1) / $(ip -4 route get "$4" | head -1)"
  ip link del "$BRIDGE"
  echo "without: $(ip -4 route get "$3" 2>&1 | head -1) / $(ip -4 route get "$4" 2>&1 | head -1)"
' _ "$WORK/guard-node" "$SRC" "$unused_pod" "$unused_svc" 2>&1) || true
grep -q "^with: $unused_pod dev $BRIDGE .* / $unused_svc dev $BRIDGE " <<<"$guard_out" &&
  grep -q "^without: RTNETLINK answers: No route to host / RTNETLINK answers: No route to host$" <<<"$guard_out" &&
  pass "without the bridge, pod and Service addresses are unreachable (not routed)" || fail "guard in a namespace:"$'\n'"$guard_out"
ip netns del "$guard_ns"

# --- a second checkout of the same commit, with its own NODE_DIR. Its
# scripts are this tree's (committed or not), so the code under test runs.
git -C "$SRC" worktree add --detach -q "$second" HEAD
cp -a "$SRC/scripts/." "$second/scripts/"
stamp0=$(cat "$NET_STAMP")
before_state() {
  echo "bridge: $(ip -4 -o addr show dev "$BRIDGE" 2>&1 | awk '{print $4}')"
  echo "routes: $(ip -4 route show dev "$BRIDGE" 2>&1 | sort | tr '\n' ';')"
  echo "guards: $(ip -4 route show type unreachable | sort | tr '\n' ';')"
  echo "fwd: $(iptables -w -S "$FWD_CHAIN" 2>&1 | tr '\n' ';') $(iptables -w -C FORWARD -j "$FWD_CHAIN" 2>&1 && echo jump)"
  echo "kube-proxy: $(iptables -w -t nat -S KUBE-SERVICES 2>&1 | grep -c "$ns/before")"
  echo "kubelet: $(iptables -w -S KUBE-FIREWALL 2>&1 | wc -l)"
}
state0=$(before_state)
second_node() { env -u CLUSTER_DIR NODE_DIR="$WORK/second-node" IMAGES_DIR="$second/.cache/images" bash "$second/scripts/node.sh" "$@"; }

rc=0
second_node up >"$WORK/second-up.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "belongs to $stamp0" "$WORK/second-up.log" && pass "up from the second checkout is refused, naming the node's owner" ||
  fail "second up: rc $rc: $(cat "$WORK/second-up.log")"
rc=0
second_node down >"$WORK/second-down.log" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "leaving $BRIDGE, its routes and iptables rules alone" "$WORK/second-down.log" &&
  pass "down from the second checkout leaves the node network alone" || fail "second down: rc $rc: $(cat "$WORK/second-down.log")"

# --- the first node still works
state1=$(before_state)
[ "$state1" = "$state0" ] && pass "bridge, routes, guard routes, forward chain, kube-proxy's and kubelet's rules unchanged" ||
  fail "network changed:"$'\n'"before: $state0"$'\n'"after:  $state1"
[ "$(cat "$NET_STAMP" 2>/dev/null)" = "$stamp0" ] && pass "the network's stamp still names this node" || fail "stamp: $(cat "$NET_STAMP" 2>&1)"
kubectl get --raw /readyz >/dev/null && pass "the API server answers" || fail "API server does not answer"
bash "$SRC/scripts/node.sh" status >"$WORK/status.log" 2>&1 && pass "node.sh status: every process running, node Ready" ||
  fail "status: $(cat "$WORK/status.log")"
pod_ready before && pass "the pod is still Ready" || fail "pod not Ready"
[ "$(kubectl -n "$ns" exec before -- /bin/sh -c 'echo exec-ok' 2>&1)" = exec-ok ] && pass "kubectl exec reaches the pod" ||
  fail "kubectl exec failed"
nats_answers "$pod_ip" && pass "the pod still answers through $BRIDGE" || fail "pod $pod_ip no longer answers"
nats_answers "$svc_ip" && pass "and through its Service" || fail "Service $svc_ip no longer answers"
nats_pod after
wait_until 180 pod_ready after && pass "a new pod starts and is Ready" || {
  fail "new pod not Ready"
  dump "$ns"
}

finish
