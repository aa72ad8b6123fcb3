#!/usr/bin/env bash
# node.sh's network ownership without a node: in a network and mount
# namespace of this test (own routes, iptables, ip_forward; tmpfs over /run
# and /var/lib, where the machine-wide stamp and CNI results live), node
# A's net_up makes the bridge, guard routes and forward chain; then
#   - `up` and `down` from another checkout's NODE_DIR (B), and `down` on a
#     copy of A's folder, change nothing of A's network;
#   - with A's bridge deleted by hand, pod and Service addresses are
#     unreachable (the guard), not routed;
#   - A's own `down` removes all of it, the guard routes last;
#   - a stamp whose network is gone (a reboot) is taken over by the next up.
# No packet is sent: routes are only looked up (`ip route get`).
set -euo pipefail
: "${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
SRC=$SWITCHBOARD_SOURCE_DIR

if [ "${1:-}" != --inside ]; then
  [ "$(id -u)" = 0 ] || {
    echo "skip: needs root (network namespaces)"
    exit 77
  }
  command -v ip >/dev/null && command -v iptables >/dev/null && command -v unshare >/dev/null || {
    echo "skip: needs ip, iptables and unshare"
    exit 77
  }
  WORK=$(mktemp -d)
  ns="sbnet-$$"
  trap 'ip netns del "$ns" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  ip netns add "$ns"
  rc=0
  ip netns exec "$ns" unshare --mount --propagation private bash "$0" --inside "$WORK" || rc=$?
  exit "$rc"
fi

# ---- inside the namespaces
WORK=$2
mount -t tmpfs sbnet-run /run
mount -t tmpfs sbnet-varlib /var/lib
FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }
eval "$(NODE_SH_SOURCE_ONLY=1 NODE_DIR="$WORK/probe" bash -c '. "$1" && declare -p BRIDGE NODE_IP POD_CIDR SERVICE_CIDR FWD_CHAIN GUARD_METRIC NET_STAMP CNI_NET' \
  _ "$SRC/scripts/node.sh")"
A="$WORK/a" B="$WORK/b"
# Tools and images of this test's own (none): nothing is built or run.
export SWITCHBOARD_TOOLS_DIR="$WORK/tools" IMAGES_DIR="$WORK/images"

# as NODE_DIR FUNCTION... -> node.sh's functions as the node in NODE_DIR
as() {
  local d=$1
  shift
  NODE_SH_SOURCE_ONLY=1 NODE_DIR="$d" bash -c '. "$1"; shift; mkdir -p "$run"; "$@"' _ "$SRC/scripts/node.sh" "$@"
}
node() { NODE_DIR="$1" bash "$SRC/scripts/node.sh" "${@:2}"; }

network() {
  echo "bridge: $(ip -4 -o addr show dev "$BRIDGE" 2>&1 | awk '{print $4}')"
  echo "routes: $(ip -4 route show 2>&1 | sort | tr '\n' ';')"
  echo "fwd: $(iptables -w -S "$FWD_CHAIN" 2>&1 | tr '\n' ';') $(iptables -w -C FORWARD -j "$FWD_CHAIN" 2>&1 && echo jump)"
  echo "kubelet: $(iptables -w -S KUBE-FIREWALL 2>&1 | tr '\n' ';')"
  echo "cni: $(ls /var/lib/cni/results 2>&1)"
  echo "stamp: $(cat "$NET_STAMP" 2>&1)"
  echo "forward: $(cat /proc/sys/net/ipv4/ip_forward)"
}
unreachable() { [ "$(ip -4 route get "$1" 2>&1)" = "RTNETLINK answers: No route to host" ]; }
unused_pod=${POD_CIDR%.*}.253
unused_svc=${SERVICE_CIDR%.*}.254

# ---- node A's network, as its `up` makes it, plus what its kubelet and
# CNI would leave (a kubelet chain, a CNI result)
fwd0=$(cat /proc/sys/net/ipv4/ip_forward)
as "$A" stamp_claim "$A/.owner"
as "$A" net_up
iptables -w -N KUBE-FIREWALL
mkdir -p /var/lib/cni/results && touch "/var/lib/cni/results/$CNI_NET-0123-eth0"
ip -4 route get "$unused_pod" | grep -q " dev $BRIDGE " && ip -4 route get "$unused_svc" | grep -q " dev $BRIDGE " &&
  pass "A's up: pod and Service addresses go to $BRIDGE" || fail "routes: $(ip -4 route show)"
guards=$(ip -4 route show type unreachable)
grep -q "^unreachable $POD_CIDR .*metric $GUARD_METRIC" <<<"$guards" && grep -q "^unreachable $SERVICE_CIDR .*metric $GUARD_METRIC" <<<"$guards" &&
  pass "guard routes beneath the bridge's" || fail "guards: $guards"
grep -qx "dir=$(cd "$A" && pwd -P) source=$(cd "$SRC" && pwd -P)" "$NET_STAMP" && pass "the network's stamp names A's folder and checkout" ||
  fail "stamp: $(cat "$NET_STAMP" 2>&1)"
state0=$(network)

# ---- B's up is refused; B's down and a down on a copy of A's folder change nothing
rc=0
node "$B" up >"$WORK/b-up.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "belongs to dir=$(cd "$A" && pwd -P)" "$WORK/b-up.log" && pass "B's up is refused, naming A" ||
  fail "B's up: rc $rc: $(cat "$WORK/b-up.log")"
rc=0
node "$B" down >"$WORK/b-down.log" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "leaving $BRIDGE, its routes and iptables rules alone" "$WORK/b-down.log" && pass "B's down says it leaves A's network alone" ||
  fail "B's down: rc $rc: $(cat "$WORK/b-down.log")"
[ "$(network)" = "$state0" ] && pass "and changes nothing of it" || fail "B's down changed:"$'\n'"$state0"$'\n'"$(network)"
cp -a "$A" "$WORK/a-copy"
rc=0
node "$WORK/a-copy" down >"$WORK/copy-down.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && [ "$(network)" = "$state0" ] && [ -f "$WORK/a-copy/.owner" ] && pass "down on a copy of A's folder is refused and changes nothing" ||
  fail "copy's down: rc $rc: $(cat "$WORK/copy-down.log")"

# ---- the guard: A's bridge gone (deleted by hand), its state still there
ip link del "$BRIDGE"
unreachable "$unused_pod" && unreachable "$NODE_IP" && unreachable "$unused_svc" &&
  pass "without the bridge, node, pod and Service addresses are unreachable" ||
  fail "without the bridge: $(ip -4 route get "$NODE_IP" 2>&1) / $(ip -4 route get "$unused_svc" 2>&1)"
as "$A" net_up
ip link show "$BRIDGE" >/dev/null 2>&1 && pass "A's up again makes the bridge again" || fail "no bridge after A's second up"

# ---- A's own down removes everything it made
rc=0
node "$A" down >"$WORK/a-down.log" 2>&1 || rc=$?
[ "$rc" = 0 ] && pass "A's down succeeds" || fail "A's down: rc $rc: $(cat "$WORK/a-down.log")"
! ip link show "$BRIDGE" >/dev/null 2>&1 && pass "bridge removed" || fail "bridge left"
[ -z "$(ip -4 route show type unreachable)" ] && [ -z "$(ip -4 route show "$SERVICE_CIDR")" ] && pass "guard and Service routes removed" ||
  fail "routes left: $(ip -4 route show)"
! iptables -w -S "$FWD_CHAIN" >/dev/null 2>&1 && ! iptables -w -C FORWARD -j "$FWD_CHAIN" 2>/dev/null &&
  ! iptables -w -S KUBE-FIREWALL >/dev/null 2>&1 && pass "forward chain and kubelet chain removed" || fail "iptables left: $(iptables -w -S)"
[ ! -e "/var/lib/cni/results/$CNI_NET-0123-eth0" ] && pass "CNI results removed" || fail "CNI result left"
[ ! -e "$NET_STAMP" ] && [ ! -e "$A/.owner" ] && pass "both stamps removed" || fail "stamps left"
[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$fwd0" ] && pass "ip_forward restored to $fwd0" || fail "ip_forward $(cat /proc/sys/net/ipv4/ip_forward), was $fwd0"

# ---- a stamp whose network is gone is taken over
echo "dir=/gone source=/gone" >"$NET_STAMP"
rc=0
as "$B" net_up >"$WORK/b-net.log" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "taking over the stale stamp" "$WORK/b-net.log" && grep -qx "dir=$(cd "$B" && pwd -P) .*" "$NET_STAMP" &&
  pass "a stale stamp (no network left) is taken over" || fail "take over: rc $rc: $(cat "$WORK/b-net.log")"
as "$B" stamp_claim "$B/.owner"
node "$B" down >/dev/null 2>&1 || true
! ip link show "$BRIDGE" >/dev/null 2>&1 && [ ! -e "$NET_STAMP" ] && pass "and its down removes it again" || fail "B's network left"

if [ "$FAILURES" -gt 0 ]; then
  echo "node_net_test: $FAILURES failure(s)" >&2
  exit 1
fi
echo "node_net_test: all passed"
