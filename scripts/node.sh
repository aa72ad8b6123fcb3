#!/usr/bin/env bash
# A real Kubernetes node on this machine, for tests that run Switchboard in
# pods: the control plane of scripts/cluster.sh (profile "node": full
# controller manager, ServiceAccount admission, the API server on the node's
# address) plus containerd 1.6, runc and the CNI plugins from Debian, and
# kubelet, kube-scheduler and kube-proxy built from k8s.io/kubernetes at the
# pinned version (scripts/build-tools.sh). Images come from
# scripts/images.sh (nothing is pulled). See docs/node.md.
#
# Usage: scripts/node.sh COMMAND
#   up       start everything (idempotent: a healthy node is left as it is)
#   down     stop every process `up` started and remove everything it made:
#            pods' containers and network namespaces, mounts under the state
#            folder, the bridge and its routes, iptables rules, the cluster.
#            Safe after a failed or partial `up`. Keeps $NODE_DIR/logs.
#            Removes only what this checkout's `up` made in this NODE_DIR
#            (stamps: $NODE_DIR/.owner for the folder, $NET_STAMP for the
#            bridge, routes and iptables chains): run from another checkout
#            or NODE_DIR it leaves a running node alone.
#   status   exit 0 when the node is Ready, 3 when not
#   env      print `export ...` lines: KUBECONFIG, SWITCHBOARD_NODE_DIR and
#            one SWITCHBOARD_IMAGE_<KEY>=name per image (images.sh names)
#
# Environment:
#   NODE_DIR               state folder (default <repo>/.cache/node)
#   SWITCHBOARD_TOOLS_DIR  tools cache (default <repo>/.cache/tools)
#   IMAGES_DIR             image cache (default <repo>/.cache/images)
#
# Addresses: the node is 10.213.128.1 on a bridge this script creates
# (sbnode0; kubelet refuses a loopback node IP); pods get 10.213.128.10-250
# on that bridge; Services get 10.213.64.0/24, routed to the same bridge so
# a ClusterIP kube-proxy has not (yet) translated never leaves the machine.
# Beneath the bridge's routes, `up` puts an unreachable route for each of the
# two ranges (metric 4213), kept until the last step of `down`: whenever the
# bridge is missing (deleted, not yet made), a connection to a node, pod or
# Service address is refused on the spot instead of taking the default
# route. Forwarding is allowed only between ports of the bridge. One node per
# machine (the bridge name and addresses are fixed).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/tool-versions.sh"
tools="${SWITCHBOARD_TOOLS_DIR:-$root/.cache/tools}"
dir="${NODE_DIR:-$root/.cache/node}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
logs="$dir/logs"
run="$dir/run"
export IMAGES_DIR="${IMAGES_DIR:-$root/.cache/images}"

NODE_NAME=switchboard-node
BRIDGE=sbnode0
NODE_IP=10.213.128.1
POD_CIDR=10.213.128.0/24
SERVICE_CIDR=10.213.64.0/24
CNI_NET=switchboard-node
FWD_CHAIN=SWITCHBOARD-NODE-FWD
GUARD_METRIC=4213
# Who made the machine-wide pieces (bridge, routes, iptables chains).
NET_STAMP=/run/switchboard-node.owner
sock="$run/containerd.sock"
export CLUSTER_DIR="$dir/cluster" CLUSTER_PROFILE=node CLUSTER_ADDRESS=$NODE_IP CLUSTER_SERVICE_CIDR=$SERVICE_CIDR
export SWITCHBOARD_TOOLS_DIR="$tools"
kubeconfig="$CLUSTER_DIR/kubeconfig"

log() { echo "node: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# ---------------------------------------------------------------- processes

# alive, start, stop, wait_for, port_free, free_port, stamp_*: scripts/lib/proc.sh.
. "$root/scripts/lib/proc.sh"
stamp="$dir/.owner"

k() { kubectl --kubeconfig "$kubeconfig" "$@"; }

# ---------------------------------------------------------------- network

# Every removal below first checks that this checkout and NODE_DIR made the
# network (net_mine): one node per machine, and a `down` from another
# checkout must not cut a running node off its address.

# net_state_exists -> any of the bridge, the guard routes or the forward
# chain is there (whoever made it)
net_state_exists() {
  ip link show "$BRIDGE" >/dev/null 2>&1 ||
    [ -n "$(ip -4 route show type unreachable "$POD_CIDR" 2>/dev/null)" ] ||
    [ -n "$(ip -4 route show type unreachable "$SERVICE_CIDR" 2>/dev/null)" ] ||
    iptables -w -S "$FWD_CHAIN" >/dev/null 2>&1
}

# net_mine -> this checkout and NODE_DIR made the node network. A node made
# before the machine-wide stamp recorded itself in run/bridge.owner.
net_mine() {
  stamp_mine "$NET_STAMP" || { [ ! -f "$NET_STAMP" ] && [ "$(cat "$run/bridge.owner" 2>/dev/null)" = "$dir" ]; }
}

# net_check -> dies, naming the owner, when another node's network is on
# the machine. A stamp with nothing left of its network (the machine
# rebooted; /run is not always a tmpfs) is stale and does not count.
net_check() {
  net_mine && return 0
  net_state_exists || return 0
  if [ -f "$NET_STAMP" ]; then
    die "the node network ($BRIDGE, its routes, $FWD_CHAIN) belongs to $(stamp_owner "$NET_STAMP"): another node runs on this machine (one at a time); stop it with its own 'node.sh down'"
  fi
  die "bridge $BRIDGE or the node's routes exist but were not made for $dir: another node runs on this machine (one at a time); stop it with its own 'node.sh down'"
}

# net_claim -> stamps the node network as ours, or dies naming its owner.
net_claim() {
  net_check
  if [ -f "$NET_STAMP" ] && ! net_mine; then
    log "taking over the stale stamp $NET_STAMP of $(stamp_owner "$NET_STAMP") (none of its network is left)"
    rm -f "$NET_STAMP"
  fi
  stamp_claim "$NET_STAMP" || die "cannot stamp $NET_STAMP ($(stamp_owner "$NET_STAMP"))"
  rm -f "$run/bridge.owner"
}

# The guard: unreachable routes beneath the bridge's (a higher metric wins
# only when the bridge's routes are gone).
guard_up() {
  local c
  for c in "$POD_CIDR" "$SERVICE_CIDR"; do ip route replace unreachable "$c" metric "$GUARD_METRIC"; done
}
guard_down() {
  local c
  for c in "$POD_CIDR" "$SERVICE_CIDR"; do
    net_mine && ip route del unreachable "$c" metric "$GUARD_METRIC" 2>/dev/null || true
  done
}

# The bridge carries the node's address before any pod exists (kubelet needs
# it at start); the CNI bridge plugin then attaches pods to it as gateway.
net_up() {
  net_claim
  guard_up
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
  fi
  ip addr replace "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE"
  # Pod to Service to pod needs forwarding; remember the old setting so
  # `down` restores it, and confine forwarding to the bridge.
  [ -f "$run/ip_forward" ] || cat /proc/sys/net/ipv4/ip_forward >"$run/ip_forward"
  iptables -w -N "$FWD_CHAIN" 2>/dev/null || iptables -w -F "$FWD_CHAIN"
  iptables -w -A "$FWD_CHAIN" -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
  iptables -w -A "$FWD_CHAIN" -i "$BRIDGE" -j DROP
  iptables -w -A "$FWD_CHAIN" -o "$BRIDGE" -j DROP
  iptables -w -C FORWARD -j "$FWD_CHAIN" 2>/dev/null || iptables -w -I FORWARD 1 -j "$FWD_CHAIN"
  echo 1 >/proc/sys/net/ipv4/ip_forward
}

# The bridge, the Service route and the forward chain; the guard routes and
# the stamp stay until the end of `down` (guard_down, net_release).
net_down() {
  net_mine && ip link del "$BRIDGE" 2>/dev/null || true
  net_mine && ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null || true
  while net_mine && iptables -w -D FORWARD -j "$FWD_CHAIN" 2>/dev/null; do :; done
  net_mine && iptables -w -F "$FWD_CHAIN" 2>/dev/null || true
  net_mine && iptables -w -X "$FWD_CHAIN" 2>/dev/null || true
  if net_mine && [ -f "$run/ip_forward" ]; then
    cat "$run/ip_forward" >/proc/sys/net/ipv4/ip_forward
    rm -f "$run/ip_forward"
  fi
  net_mine && rm -f /var/lib/cni/results/"$CNI_NET"-* 2>/dev/null || true
}

net_release() {
  if stamp_mine "$NET_STAMP"; then rm -f "$NET_STAMP"; fi
  rm -f "$run/bridge.owner"
}

# ---------------------------------------------------------------- DNS

# Service names for pods (the operator probes nats://NAME.NS.svc:4222): a
# dnsmasq on the node address answers NAME.NS.svc[.cluster.local] from a
# hosts file that dns-sync rewrites from the Services every 2 s, and, as
# cluster DNS does for a StatefulSet's pods, HOSTNAME.SUBDOMAIN.NS.svc for a
# pod with spec.hostname and spec.subdomain (routed NATS pods find each
# other by these). No upstream: other names fail at once, nothing is
# forwarded off the machine.
dns_up() {
  alive dnsmasq && alive dns-sync && return 0
  stop dns-sync
  stop dnsmasq
  : >"$dir/dns-hosts"
  start dnsmasq "$(command -v dnsmasq)" --keep-in-foreground --no-resolv --no-hosts --no-poll \
    --bind-interfaces --listen-address="$NODE_IP" --port=53 --user=root --pid-file= \
    --local=/cluster.local/ --local=/svc/ --domain-needed --addn-hosts="$dir/dns-hosts" --log-facility=-
  wait_for "dnsmasq" 20 dnsmasq ss -Hluna "sport = :53 and src $NODE_IP"
  # dns-sync exits once `alive dnsmasq` fails: start it on a serving dnsmasq.
  start dns-sync "$(command -v bash)" "$root/scripts/node.sh" dns-sync
}

# The sync loop (runs as `node.sh dns-sync`): bounded by dnsmasq's life and
# at most 6 hours, so it always ends by itself.
dns_sync() {
  local hosts="$dir/dns-hosts" pid i new pods
  pid=$(cat "$run/dnsmasq.pid")
  for ((i = 0; i < 6 * 3600 / 2; i++)); do
    alive dnsmasq || exit 0
    if new=$(k get services -A -o jsonpath='{range .items[*]}{.spec.clusterIP} {.metadata.name}.{.metadata.namespace}.svc.cluster.local {.metadata.name}.{.metadata.namespace}.svc{"\n"}{end}' 2>/dev/null) &&
      pods=$(k get pods -A -o json 2>/dev/null | jq -r '.items[] | select(.spec.hostname and .spec.subdomain and .status.podIP)
        | (.spec.hostname + "." + .spec.subdomain + "." + .metadata.namespace + ".svc") as $n
        | "\(.status.podIP) \($n).cluster.local \($n)"'); then
      new=$(printf '%s\n%s\n' "$new" "$pods" | grep -v '^None ' | grep -v '^ ' | grep -v '^$' | sort || true)
      if [ "$new" != "$(cat "$hosts")" ]; then
        printf '%s\n' "$new" >"$hosts.tmp"
        mv "$hosts.tmp" "$hosts"
        kill -HUP "$pid" 2>/dev/null || true
      fi
    fi
    sleep 2
  done
}

# ---------------------------------------------------------------- containerd

containerd_config() {
  mkdir -p "$dir/containerd" "$dir/cni/net.d" "$dir/cni/ipam"
  cat >"$dir/containerd/config.toml" <<EOF
# Generated by scripts/node.sh.
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$sock"
[ttrpc]
  address = "$run/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  # Never pulled: imported by scripts/images.sh.
  sandbox_image = "$PAUSE_IMAGE"
  # This VM refuses negative oom_score_adj values.
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  # Pods' network namespaces under our state folder, so \`down\` finds them.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
    max_conf_num = 1
EOF
  # ipMasq off: pods talk only to the node and to each other.
  cat >"$dir/cni/net.d/10-switchboard.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NET",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "10.213.128.10", "rangeEnd": "10.213.128.250", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
}

containerd_up() {
  alive containerd && ctr --address "$sock" version >/dev/null 2>&1 && return 0
  stop containerd
  [ ${#sock} -lt 100 ] || die "socket path too long for unix sockets: $sock (set NODE_DIR shorter)"
  containerd_config
  start containerd "$(command -v containerd)" --config "$dir/containerd/config.toml" --log-level warn
  wait_for "containerd" 30 containerd ctr --address "$sock" version
}

# ---------------------------------------------------------------- kubelet etc.

kubelet_config() {
  local port=$1 hport=$2
  mkdir -p "$dir/kubelet" "$dir/pod-logs" "$dir/volume-plugins"
  # Pods without clusterDNS would get the host's resolvers; the node's own
  # DNS is the only nameserver they see.
  echo "nameserver $NODE_IP" >"$dir/resolv.conf"
  cat >"$dir/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $hport
cgroupDriver: cgroupfs
# The VM's hybrid cgroup layout: kubelet must accept cgroup v1.
failCgroupV1: false
# No QoS cgroup tree: nothing of ours outlives the containers runc removes.
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $CLUSTER_DIR/pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $dir/resolv.conf
podLogsDir: $dir/pod-logs
volumePluginDir: $dir/volume-plugins
# A shared test machine: evict only when really out of space or memory.
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 40
serializeImagePulls: false
registerNode: true
EOF
}

node_ready() {
  [ "$(k get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

kubelet_up() {
  alive kubelet && node_ready && return 0
  stop kubelet
  local port hport
  port=$(free_port)
  hport=$(free_port)
  kubelet_config "$port" "$hport"
  start kubelet "$tools/bin/kubelet" --config="$dir/kubelet-config.yaml" --kubeconfig="$kubeconfig" \
    --root-dir="$dir/kubelet" --cert-dir="$dir/kubelet/pki" --hostname-override="$NODE_NAME" \
    --node-ip="$NODE_IP" --v=1
  wait_for "node $NODE_NAME Ready" 120 kubelet node_ready
}

proxy_config() {
  cat >"$dir/kube-proxy-config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$1
metricsBindAddress: 127.0.0.1:$2
nodePortAddresses: [$NODE_IP/32]
# Leave the host's conntrack sysctls and route_localnet alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false, masqueradeAll: false, syncPeriod: 5s, minSyncPeriod: 0s}
EOF
}

# kube-proxy has written the rule for the `kubernetes` Service.
proxy_synced() { grep -q "default/kubernetes:https" <<<"$(iptables -w -t nat -S KUBE-SERVICES 2>/dev/null)"; }

proxy_up() {
  alive kube-proxy && proxy_synced && return 0
  stop kube-proxy
  proxy_config "$(free_port)" "$(free_port)"
  start kube-proxy "$tools/bin/kube-proxy" --config="$dir/kube-proxy-config.yaml" --v=1
  wait_for "kube-proxy rules" 60 kube-proxy proxy_synced
}

scheduler_healthy() { curl -skf --max-time 2 "https://127.0.0.1:$(cat "$run/scheduler.port")/healthz"; }

scheduler_up() {
  alive kube-scheduler && scheduler_healthy && return 0
  stop kube-scheduler
  free_port >"$run/scheduler.port"
  start kube-scheduler "$tools/bin/kube-scheduler" --kubeconfig="$kubeconfig" \
    --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$(cat "$run/scheduler.port")" --leader-elect=false --v=1
  wait_for "kube-scheduler" 60 kube-scheduler scheduler_healthy
}

# ---------------------------------------------------------------- commands

image_names() { bash "$root/scripts/images.sh" names; }

cmd_up() {
  [ "$(id -u)" = 0 ] || die "needs root (containerd, bridge, iptables)"
  local c
  for c in containerd containerd-shim-runc-v2 runc ctr iptables conntrack ip dnsmasq buildah mmdebstrap jq curl; do
    command -v "$c" >/dev/null || die "$c missing: run scripts/install-deps.sh"
  done
  [ -x /usr/lib/cni/bridge ] || die "CNI plugins missing in /usr/lib/cni: run scripts/install-deps.sh"
  dir_not_ours && exit 1
  # Before anything is built or made: is the machine's node network free?
  net_check
  stamp_claim "$stamp" || die "cannot stamp $dir"
  local t0=$SECONDS
  mkdir -p "$run" "$logs"
  # `down` removes /var/lib/cni only when it was not there before.
  [ -d /var/lib/cni ] || [ -f "$run/var-lib-cni.created" ] || touch "$run/var-lib-cni.created"
  bash "$root/scripts/build-tools.sh" etcd kube-apiserver kube-controller-manager helm kubelet kube-scheduler kube-proxy
  PAUSE_IMAGE=$(image_names | sed -n 's/^pause=//p')
  local t1=$SECONDS
  bash "$root/scripts/images.sh" build
  log "images ready in $((SECONDS - t1))s"
  net_up
  bash "$root/scripts/cluster.sh" up
  containerd_up
  bash "$root/scripts/images.sh" import "$sock"
  dns_up
  kubelet_up
  proxy_up
  scheduler_up
  log "ready in $((SECONDS - t0))s: node $NODE_NAME at $NODE_IP; KUBECONFIG=$kubeconfig"
}

# dir_not_ours -> true (with a message) when NODE_DIR carries another
# checkout's or folder's stamp (say, a copy of a state folder)
dir_not_ours() {
  [ -f "$stamp" ] && ! stamp_mine "$stamp" || return 1
  log "$dir was made by another checkout or folder ($(stamp_owner "$stamp")): use its own 'node.sh down', or another NODE_DIR"
}

# Everything below tolerates a half-made node: each step checks what exists.
# Processes go by their pid files (checked against the binary they run),
# containers through our own containerd, shims by our socket; mounts and
# folders only in a NODE_DIR stamped by this checkout; the machine-wide
# network, iptables and CNI state only when its stamp is ours (net_mine).
cmd_down() {
  dir_not_ours && exit 1
  local own_dir=no own_net=no
  stamp_mine "$stamp" && own_dir=yes
  net_mine && own_net=yes
  stop kube-scheduler
  stop kube-proxy
  stop kubelet 300
  stop dns-sync
  stop dnsmasq
  local ids=() id
  # Our containers and sandboxes, also when containerd is gone: from its
  # metadata folders.
  mapfile -t ids < <(ls "$dir/containerd/root/io.containerd.grpc.v1.cri/sandboxes" \
    "$dir/containerd/root/io.containerd.grpc.v1.cri/containers" \
    "$dir/containerd/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null | grep -E '^[0-9a-f]{64}$' | sort -u)
  if alive containerd; then
    mapfile -t -O "${#ids[@]}" ids < <(ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null || true)
    for id in "${ids[@]}"; do
      ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    for id in "${ids[@]}"; do
      ctr --address "$sock" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
      ctr --address "$sock" -n k8s.io containers delete "$id" >/dev/null 2>&1 || true
    done
  fi
  stop containerd
  kill_shims
  [ "$own_dir" = yes ] && unmount_all
  remove_cgroups "${ids[@]+"${ids[@]}"}"
  remove_cni_results "${ids[@]+"${ids[@]}"}"
  if [ "$own_net" = yes ]; then
    # kube-proxy's and kubelet's iptables rules are machine-wide: the
    # network's owner ran them.
    if [ -x "$tools/bin/kube-proxy" ] && net_mine; then
      "$tools/bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
    fi
    remove_kubelet_chains
    net_down
  elif net_state_exists; then
    log "the node network belongs to $(stamp_owner "$NET_STAMP"): leaving $BRIDGE, its routes and iptables rules alone"
  fi
  bash "$root/scripts/cluster.sh" down || true
  # Last, so that until now a connection to a node, pod or Service address
  # was refused, never routed.
  if [ "$own_net" = yes ]; then
    guard_down
    net_release
  fi
  if [ "$own_dir" = no ]; then
    if [ -d "$run" ]; then
      log "stopped; $dir has no stamp of this checkout's 'up', so its files stay"
    else
      log "nothing of this checkout's in $dir"
    fi
    return 0
  fi
  # Keep logs/ for post-mortems; the stamp goes last, so an interrupted
  # down can be run again. Never into a file system mounted below (a mount
  # unmount_all could not remove).
  local f
  for f in "$dir"/* "$dir"/.[!.]*; do
    [ -e "$f" ] || continue
    [ "$f" = "$logs" ] || [ "$f" = "$stamp" ] || { stamp_mine "$stamp" && rm -rf --one-file-system "$f"; }
  done
  rm -f "$stamp"
  log "stopped"
}

# The runc shims of our containerd outlive it: find them by the socket they
# were started for (never by name alone), kill what runs under them, then
# them.
kill_shims() {
  local p cmd pids=() d
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    case "$cmd" in
      *containerd-shim-runc-v2*" -address $sock "*) pids+=("${p#/proc/}") ;;
    esac
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for p in "${pids[@]}"; do
    for d in $(descendants "$p"); do kill -KILL "$d" 2>/dev/null || true; done
    kill -KILL "$p" 2>/dev/null || true
  done
  log "killed ${#pids[@]} orphaned containerd shim(s)"
}

# descendants PID -> every process below PID
descendants() {
  local kids k
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  for k in $kids; do
    echo "$k"
    descendants "$k"
  done
}

# Mounts under the state folder (overlay snapshots, pods' volumes, network
# namespaces, kubelet's bind mount of its root), deepest first.
unmount_all() {
  local m i
  stamp_mine "$stamp" || return 0
  for ((i = 0; i < 5; i++)); do
    mapfile -t mounts < <(awk -v d="$dir/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r)
    [ ${#mounts[@]} -gt 0 ] || return 0
    for m in "${mounts[@]}"; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
  awk -v d="$dir/" 'index($5, d) == 1 {print "node: still mounted: " $5}' /proc/self/mountinfo >&2
}

# runc removes a container's cgroups when it deletes it; a killed shim does
# not: remove the empty ones left for our container ids, then containerd's
# empty k8s.io parents.
remove_cgroups() {
  local id c
  for id in "$@"; do
    for c in /sys/fs/cgroup/*/k8s.io/"$id"; do
      [ -d "$c" ] && rmdir "$c" 2>/dev/null || true
    done
  done
  # The parents are shared by any containerd on the machine: the node's.
  net_mine || return 0
  for c in /sys/fs/cgroup/*/k8s.io; do
    [ -d "$c" ] && rmdir "$c" 2>/dev/null || true
  done
}

# libcni caches each attachment's result in /var/lib/cni/results, named by
# network and container id; host-local's allocations are under $dir.
remove_cni_results() {
  local id
  for id in "$@"; do rm -f /var/lib/cni/results/*-"$id"-* 2>/dev/null || true; done
  net_mine || return 0
  rm -f /var/lib/cni/results/"$CNI_NET"-* 2>/dev/null || true
  if [ -f "$run/var-lib-cni.created" ]; then
    rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
  fi
}

# kubelet's own iptables chains (kube-proxy --cleanup leaves them): the
# localnet firewall, the canaries and the version hint, in IPv4 and IPv6.
remove_kubelet_chains() {
  local ipt table chain
  net_mine || return 0
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for table in filter nat mangle; do
      for chain in INPUT OUTPUT; do
        while "$ipt" -w -t "$table" -D "$chain" -j KUBE-FIREWALL 2>/dev/null; do :; done
      done
      for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
        "$ipt" -w -t "$table" -F "$chain" 2>/dev/null || true
        "$ipt" -w -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

cmd_status() {
  [ -f "$run/containerd.pid" ] || {
    echo "not running (no state in $dir)"
    return 3
  }
  local rc=0 n
  bash "$root/scripts/cluster.sh" status || rc=3
  for n in containerd dnsmasq dns-sync kubelet kube-proxy kube-scheduler; do
    if alive "$n"; then echo "$n: running pid $(cat "$run/$n.pid")"; else
      echo "$n: down"
      rc=3
    fi
  done
  if node_ready; then echo "node $NODE_NAME: Ready"; else
    echo "node $NODE_NAME: not Ready"
    rc=3
  fi
  return $rc
}

cmd_env() {
  echo "export KUBECONFIG=$kubeconfig"
  echo "export SWITCHBOARD_KUBECONFIG=$kubeconfig"
  echo "export SWITCHBOARD_NODE_DIR=$dir"
  echo "export SWITCHBOARD_NODE_SOCKET=$sock"
  image_names | while IFS='=' read -r key name; do
    echo "export SWITCHBOARD_IMAGE_$(echo "$key" | tr a-z A-Z)=$name"
  done
}

locked() {
  exec 9>"$dir/.lock"
  flock 9
  "$@"
}

# Sourced (`NODE_SH_SOURCE_ONLY=1 . scripts/node.sh`): functions only.
if [ "${NODE_SH_SOURCE_ONLY:-}" = 1 ]; then
  unset NODE_SH_SOURCE_ONLY # not for the processes it starts
  return 0
fi

case "${1:-}" in
  up) locked cmd_up ;;
  down) locked cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  dns-sync) dns_sync ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
