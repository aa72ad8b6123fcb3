#!/usr/bin/env bash
# A real, local Kubernetes API for tests and development: etcd and
# kube-apiserver (built from their Go modules by scripts/build-tools.sh) on
# 127.0.0.1 free ports, with generated certificates, RBAC authorization and a
# service-account signing key, the way controller-runtime's envtest runs them.
#
# Usage: scripts/cluster.sh COMMAND
#   up                 start (or keep) the cluster, apply crds/ and wait until
#                      the CRDs are Established; `up --no-crds` skips them.
#                      Idempotent: a healthy cluster is left as it is.
#   down               stop exactly the processes `up` started; remove state
#                      (keeps $CLUSTER_DIR/logs for post-mortems). Only in a
#                      folder stamped by this checkout's `up` ($CLUSTER_DIR/.owner):
#                      a folder another checkout made (or a copy of it) is
#                      left alone, and down fails saying whose it is.
#   status             print state; exit 0 when the API server is ready, 3 when not
#   env                print `export KUBECONFIG=...` lines (eval "$(scripts/cluster.sh env)")
#   kubeconfig         print the admin kubeconfig's path
#   crds               apply crds/ and wait until every CRD is Established
#   restart-apiserver  stop_apiserver and start it again on the same port
#                      (etcd keeps running, so the data survive; the
#                      controller manager reconnects by itself)
#
# Environment:
#   CLUSTER_DIR            state folder (default <repo>/.cache/cluster)
#   SWITCHBOARD_TOOLS_DIR  where build-tools.sh puts bin/ (default <repo>/.cache/tools)
#   CLUSTER_READY_TIMEOUT  seconds to wait for /readyz (default 120)
#   CLUSTER_CONTROLLER_MANAGER  1 (default) runs kube-controller-manager with
#                          the namespace, garbage-collector, serviceaccount and
#                          clusterrole-aggregation controllers; 0 runs the API
#                          server alone (envtest).
#   CLUSTER_PROFILE        "api" (default): the API server for API-only tests,
#                          as below. "node": the control plane of the test
#                          node (scripts/node.sh sets it): the API server on
#                          CLUSTER_ADDRESS (an address on the node's bridge,
#                          so pods reach it through the `kubernetes` Service),
#                          ServiceAccount admission (pods get tokens), the
#                          `kubernetes` endpoints kept by the lease reconciler,
#                          webhooks dialled at their Service's ClusterIP, and
#                          the full controller manager (every default
#                          controller: deployments, replica sets, stateful
#                          sets, endpoints, root CA ConfigMaps, ...).
#   CLUSTER_ADDRESS        address the API server binds (default 127.0.0.1)
#   CLUSTER_SERVICE_CIDR   Service IP range, a /24 (default 10.0.0.0/24)
#
# What runs: etcd, kube-apiserver and (by default) kube-controller-manager
# limited to four controllers, so a deleted Namespace is finalized,
# ownerReferences are garbage collected, every namespace gets its `default`
# ServiceAccount, and aggregated ClusterRoles (view/edit/admin) are filled.
# What does not: scheduler, kubelet, every other controller. Pods are never
# scheduled; Deployments get no ReplicaSets; Services get no endpoints.
# TokenRequest (`kubectl create token SA`) works because the API server
# signs tokens itself. See docs/cluster.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/tool-versions.sh"
tools="${SWITCHBOARD_TOOLS_DIR:-$root/.cache/tools}"
dir="${CLUSTER_DIR:-$root/.cache/cluster}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
certs="$dir/pki"
logs="$dir/logs"
run="$dir/run"
ready_timeout="${CLUSTER_READY_TIMEOUT:-120}"
with_kcm="${CLUSTER_CONTROLLER_MANAGER:-1}"
profile="${CLUSTER_PROFILE:-api}"
addr="${CLUSTER_ADDRESS:-127.0.0.1}"
service_cidr="${CLUSTER_SERVICE_CIDR:-10.0.0.0/24}"
# The first address of the range is the `kubernetes` Service's ClusterIP.
service_ip="${service_cidr%/*}"
service_ip="${service_ip%.*}.$((${service_ip##*.} + 1))"
case "$profile" in api | node) ;; *)
  echo "cluster: CLUSTER_PROFILE must be api or node, not '$profile'" >&2
  exit 2
  ;;
esac
ETCD_PORT= ETCD_PEER_PORT= APISERVER_PORT=

log() { echo "cluster: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# ---------------------------------------------------------------- processes

# alive, start, stop, wait_for, port_free, free_port: scripts/lib/proc.sh.
# Every process here gets 20 s after SIGTERM (etcd closes its database).
. "$root/scripts/lib/proc.sh"

# stop_apiserver -> with clients holding watches (the controller manager, a
# test's informer) the API server's graceful shutdown stalls for about 20 s
# after it has stopped listening and drained its non-watch requests; all its
# state is in etcd, so once the port is closed it gets 1 s more, then SIGKILL.
stop_apiserver() {
  if [ -n "$APISERVER_PORT" ]; then
    stop kube-apiserver 200 port_free "$APISERVER_PORT"
  else
    stop kube-apiserver 200
  fi
}

# ---------------------------------------------------------------- certificates

# ECDSA P-256 everywhere: key generation takes milliseconds, not seconds.
newkey() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

# sign NAME SUBJECT EXTFILE_CONTENT -> pki/NAME.{key,crt} signed by pki/CA
sign() {
  local name=$1 subj=$2 ext=$3 ca=${4:-ca}
  newkey "$certs/$name.key"
  openssl req -new -key "$certs/$name.key" -subj "$subj" -out "$certs/$name.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$certs/$name.ext"
  openssl x509 -req -in "$certs/$name.csr" -CA "$certs/$ca.crt" -CAkey "$certs/$ca.key" \
    -CAcreateserial -days 3650 -sha256 -extfile "$certs/$name.ext" -out "$certs/$name.crt" 2>/dev/null
  rm -f "$certs/$name.csr" "$certs/$name.ext"
}

gen_certs() {
  # The serving certificate names the bind address and the Service IP: a
  # folder made for another address gets new certificates.
  local sans="IP:127.0.0.1,IP:$addr,IP:$service_ip" made
  if [ -f "$certs/.complete" ]; then
    made=$(cat "$certs/.complete")
    [ "$made" = "$sans" ] && return 0
    # An empty stamp is from before the SANs were recorded: those
    # certificates are the default profile's (127.0.0.1, 10.0.0.1). Keep
    # them, or a running cluster's kubeconfig would get a CA it does not use.
    [ -z "$made" ] && [ "$sans" = "IP:127.0.0.1,IP:127.0.0.1,IP:10.0.0.1" ] && return 0
  fi
  rm -rf "$certs"
  mkdir -p "$certs"
  chmod 700 "$certs"
  for ca in ca front-proxy-ca; do
    newkey "$certs/$ca.key"
    openssl req -x509 -new -key "$certs/$ca.key" -subj "/CN=switchboard-$ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out "$certs/$ca.crt" 2>/dev/null
  done
  sign apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$sans,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # The admin identity: group system:masters bypasses RBAC, as kubeadm's admin.
  sign admin "/O=system:masters/CN=switchboard-admin" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  # Front proxy (requestheader) client, so aggregated APIs could authenticate.
  sign front-proxy-client "/CN=front-proxy-client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth" front-proxy-ca
  # Service-account token signing key pair (ES256).
  newkey "$certs/sa.key"
  openssl ec -in "$certs/sa.key" -pubout -out "$certs/sa.pub" 2>/dev/null
  chmod 600 "$certs"/*.key
  echo "$sans" >"$certs/.complete"
}

# ---------------------------------------------------------------- servers

etcd_args() {
  echo --name=switchboard --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="switchboard=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync=true --log-level=warn --quota-backend-bytes=2147483648
}

# Differences of the node profile: pods are admitted with service-account
# tokens, the `kubernetes` Service gets the API server's address as its
# endpoint, webhooks are dialled at their Service's ClusterIP (kube-proxy on
# the node routes it; the node's bridge holds the whole Service range, so
# nothing leaves the machine), and the API server reaches kubelets (logs,
# exec) with the admin certificate.
apiserver_profile_args() {
  if [ "$profile" = node ]; then
    echo --endpoint-reconciler-type=lease --enable-aggregator-routing=false \
      --kubelet-client-certificate="$certs/admin.crt" --kubelet-client-key="$certs/admin.key" \
      --kubelet-preferred-address-types=InternalIP
  else
    echo --disable-admission-plugins=ServiceAccount \
      --endpoint-reconciler-type=none --enable-aggregator-routing=true
  fi
}

apiserver_args() {
  # Admission: the default set minus ServiceAccount (it would reject Pods
  # whose ServiceAccount no controller created). Authorization: Node,RBAC as
  # a real cluster. Priority and fairness stays on (clients see 429s as in
  # production). Aggregator routing: webhooks and aggregated APIs given as
  # a Service are dialled at the Service's endpoints, not its ClusterIP;
  # nothing routes the ClusterIP range here, and no pod runs, so a Service
  # webhook fails fast ("no endpoints") instead of sending traffic off the
  # machine. Tests register webhooks by URL on 127.0.0.1 instead.
  echo --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address="$addr" --advertise-address="$addr" --secure-port="$APISERVER_PORT" \
    --cert-dir="$certs" --tls-cert-file="$certs/apiserver.crt" --tls-private-key-file="$certs/apiserver.key" \
    --client-ca-file="$certs/ca.crt" \
    --requestheader-client-ca-file="$certs/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-extra-headers-prefix=X-Remote-Extra- --requestheader-group-headers=X-Remote-Group \
    --requestheader-username-headers=X-Remote-User \
    --proxy-client-cert-file="$certs/front-proxy-client.crt" --proxy-client-key-file="$certs/front-proxy-client.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$certs/sa.pub" --service-account-signing-key-file="$certs/sa.key" \
    --api-audiences=https://kubernetes.default.svc.cluster.local \
    --authorization-mode=Node,RBAC \
    --service-cluster-ip-range="$service_cidr" --allow-privileged=true \
    $(apiserver_profile_args) \
    --v=1
}

write_state() {
  mkdir -p "$run"
  cat >"$run/ports.env" <<EOF
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
APISERVER_PORT=$APISERVER_PORT
EOF
}

load_state() {
  [ -f "$run/ports.env" ] || return 1
  . "$run/ports.env"
}

readyz() {
  curl -sf --max-time 3 --cacert "$certs/ca.crt" --cert "$certs/admin.crt" --key "$certs/admin.key" \
    "https://$addr:$APISERVER_PORT/readyz" >/dev/null 2>&1
}

etcd_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1; }

start_etcd() {
  local attempt
  for attempt in 1 2 3; do
    ETCD_PORT=$(free_port)
    ETCD_PEER_PORT=$(free_port)
    while [ "$ETCD_PEER_PORT" = "$ETCD_PORT" ]; do ETCD_PEER_PORT=$(free_port); done
    write_state
    # A port taken after we picked it makes etcd exit at once.
    start etcd "$tools/bin/etcd" $(etcd_args) && wait_for etcd 60 etcd etcd_healthy && return 0
    stop etcd 200
    log "etcd attempt $attempt failed; retrying on other ports"
  done
  die "etcd did not start (see $logs/etcd.log)"
}

start_apiserver() {
  # $1 = keep: reuse APISERVER_PORT (restart-apiserver, or `up` after the
  # API server died: clients holding the kubeconfig must find it again),
  # otherwise pick one.
  local attempt i
  if [ "${1:-}" = keep ]; then
    # A killed API server can still hold its listening socket for a moment
    # after it shows as gone: a Go process's leader thread turns zombie
    # while the others are still exiting, and the socket closes with the
    # last of them. Wait for that, with a deadline, before judging.
    for ((i = 0; i < 100; i++)); do
      port_free "$APISERVER_PORT" && break
      sleep 0.1
    done
  fi
  if [ "${1:-}" = keep ] && ! port_free "$APISERVER_PORT"; then
    die "port $APISERVER_PORT of the stopped kube-apiserver is taken by another process ($(ss -Htlnp "sport = :$APISERVER_PORT" | head -1)); stop it, or run 'scripts/cluster.sh down' and 'up' for a new port"
  fi
  for attempt in 1 2 3; do
    if [ "${1:-}" != keep ]; then
      APISERVER_PORT=$(free_port)
      while [ "$APISERVER_PORT" = "$ETCD_PORT" ] || [ "$APISERVER_PORT" = "$ETCD_PEER_PORT" ]; do
        APISERVER_PORT=$(free_port)
      done
    fi
    write_state
    start kube-apiserver "$tools/bin/kube-apiserver" $(apiserver_args) &&
      wait_for kube-apiserver "$ready_timeout" kube-apiserver readyz && return 0
    stop_apiserver
    [ "${1:-}" = keep ] && die "kube-apiserver did not restart on port $APISERVER_PORT (see $logs/kube-apiserver.log)"
    log "kube-apiserver attempt $attempt failed; retrying on another port"
  done
  die "kube-apiserver did not start (see $logs/kube-apiserver.log)"
}

# The controllers this cluster runs: enough for namespace deletion, garbage
# collection of owned objects, default ServiceAccounts and aggregated
# ClusterRoles, nothing that needs nodes.
kcm_args() {
  echo --kubeconfig="$dir/kubeconfig" --secure-port=0 --leader-elect=false --v=1
  if [ "$profile" = node ]; then
    # Every default controller. The root CA goes into each namespace's
    # kube-root-ca.crt ConfigMap, which pods' token volumes include.
    echo --controllers='*' --root-ca-file="$certs/ca.crt" \
      --service-account-private-key-file="$certs/sa.key" --service-cluster-ip-range="$service_cidr"
  else
    echo --controllers=namespace,garbagecollector,serviceaccount,clusterrole-aggregation
  fi
}

kcm_synced() { kubectl --kubeconfig "$dir/kubeconfig" -n default get serviceaccount default >/dev/null 2>&1; }

start_controller_manager() {
  # The serviceaccount controller creating default/default shows the
  # controllers run and have synced their caches.
  { start kube-controller-manager "$tools/bin/kube-controller-manager" $(kcm_args) &&
    wait_for kube-controller-manager 60 kube-controller-manager kcm_synced; } ||
    die "kube-controller-manager did not start (see $logs/kube-controller-manager.log)"
}

write_kubeconfig() {
  local kc="$dir/kubeconfig" tmp="$dir/kubeconfig.tmp"
  rm -f "$tmp"
  KUBECONFIG="$tmp" kubectl config set-cluster switchboard --server="https://$addr:$APISERVER_PORT" \
    --certificate-authority="$certs/ca.crt" --embed-certs=true >/dev/null
  KUBECONFIG="$tmp" kubectl config set-credentials switchboard-admin \
    --client-certificate="$certs/admin.crt" --client-key="$certs/admin.key" --embed-certs=true >/dev/null
  KUBECONFIG="$tmp" kubectl config set-context switchboard --cluster=switchboard --user=switchboard-admin \
    --namespace=default >/dev/null
  KUBECONFIG="$tmp" kubectl config use-context switchboard >/dev/null
  chmod 600 "$tmp"
  mv "$tmp" "$kc"
}

install_crds() {
  local kc="$dir/kubeconfig"
  shopt -s nullglob
  local files=("$root"/crds/*.yaml)
  shopt -u nullglob
  [ ${#files[@]} -gt 0 ] || {
    log "no CRDs in $root/crds"
    return 0
  }
  local args=()
  for f in "${files[@]}"; do args+=(-f "$f"); done
  # Server-side apply: no last-applied annotation, whose 256 KiB limit large
  # CRDs can exceed.
  kubectl --kubeconfig "$kc" apply --server-side --force-conflicts --field-manager=switchboard-cluster "${args[@]}" >&2
  kubectl --kubeconfig "$kc" wait --for condition=Established --timeout=60s "${args[@]}" >&2
}

# ---------------------------------------------------------------- commands

# The stamp `up` writes and `down` checks (scripts/lib/proc.sh).
stamp="$dir/.owner"

# not_ours -> true (with a message) when the folder carries another owner's stamp
not_ours() {
  [ -f "$stamp" ] && ! stamp_mine "$stamp" || return 1
  log "$dir was made by another checkout or folder ($(stamp_owner "$stamp")); use its own 'cluster.sh down', or another CLUSTER_DIR"
}

cmd_up() {
  local crds=yes
  [ "${1:-}" = --no-crds ] && crds=no
  command -v kubectl >/dev/null || die "kubectl not on PATH"
  command -v openssl >/dev/null || die "openssl not on PATH"
  not_ours && exit 1
  stamp_claim "$stamp" || die "cannot stamp $dir"
  local t0=$SECONDS
  # helm too: the e2e tests that use this cluster install the chart.
  local need=(etcd kube-apiserver helm) missing=() t
  [ "$with_kcm" = 0 ] || need+=(kube-controller-manager)
  for t in "${need[@]}"; do [ -x "$tools/bin/$t" ] || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "building ${missing[*]} into $tools (slow on a cold cache)"
    SWITCHBOARD_TOOLS_DIR="$tools" bash "$root/scripts/build-tools.sh" "${missing[@]}"
  fi
  gen_certs
  local fresh_apiserver=yes
  if load_state && alive etcd && etcd_healthy; then
    if alive kube-apiserver && readyz; then
      log "already running: https://$addr:$APISERVER_PORT"
      fresh_apiserver=no
    else
      # Same port: the kubeconfig stays valid, and the operator, config-sync
      # or webhook already holding it reconnect by themselves.
      stop_apiserver
      log "etcd running; restarting kube-apiserver on its port $APISERVER_PORT"
      start_apiserver keep
    fi
  else
    # etcd is gone (its data with it): start over, but keep the API
    # server's port when there was one and it is free, so the kubeconfig
    # clients hold still points at it.
    local old_port="${APISERVER_PORT:-}"
    stop kube-controller-manager 200
    stop_apiserver
    stop etcd 200
    rm -rf "$dir/etcd"
    start_etcd
    if [ -n "$old_port" ] && port_free "$old_port"; then
      APISERVER_PORT=$old_port
      start_apiserver keep
    else
      start_apiserver
    fi
  fi
  write_kubeconfig
  if [ "$with_kcm" = 0 ]; then
    stop kube-controller-manager 200
  elif [ "$fresh_apiserver" = yes ] || ! alive kube-controller-manager; then
    # A new API server may listen on a new port: the controller manager
    # must read the new kubeconfig.
    stop kube-controller-manager 200
    start_controller_manager
  fi
  [ "$crds" = yes ] && install_crds
  log "ready in $((SECONDS - t0))s: https://$addr:$APISERVER_PORT  KUBECONFIG=$dir/kubeconfig"
}

cmd_down() {
  not_ours && exit 1
  # The API server's port, so its stop ends once the port is closed.
  load_state || true
  # Pid files are checked against the binary each process runs, so even a
  # folder without a stamp (made before stamps) only stops our processes.
  stop kube-controller-manager 200
  stop_apiserver
  stop etcd 200
  if ! stamp_mine "$stamp"; then
    if [ -d "$run" ]; then
      log "stopped; $dir has no stamp of this checkout's 'up', so its files stay"
    else
      log "nothing of this checkout's in $dir"
    fi
    return 0
  fi
  # Keep logs/ for post-mortems; everything else is state of this run. The
  # stamp goes last: an interrupted down can be run again.
  rm -rf --one-file-system "$dir/etcd" "$run" "$certs" "$dir/kubeconfig" "$dir/kubeconfig.tmp"
  rm -f "$stamp"
  log "stopped"
}

cmd_status() {
  if ! load_state; then
    echo "not running (no state in $dir)"
    return 3
  fi
  local rc=0
  if alive etcd && etcd_healthy; then
    echo "etcd: running pid $(cat "$run/etcd.pid") http://127.0.0.1:$ETCD_PORT"
  else
    echo "etcd: down"
    rc=3
  fi
  if alive kube-apiserver && readyz; then
    echo "kube-apiserver: ready pid $(cat "$run/kube-apiserver.pid") https://$addr:$APISERVER_PORT"
  else
    echo "kube-apiserver: not ready"
    rc=3
  fi
  if alive kube-controller-manager; then
    echo "kube-controller-manager: running pid $(cat "$run/kube-controller-manager.pid")"
  elif [ "$with_kcm" = 0 ]; then
    echo "kube-controller-manager: disabled (CLUSTER_CONTROLLER_MANAGER=0)"
  else
    echo "kube-controller-manager: down"
    rc=3
  fi
  echo "kubeconfig: $dir/kubeconfig"
  return $rc
}

cmd_restart_apiserver() {
  not_ours && exit 1
  load_state || die "no cluster in $dir (run: scripts/cluster.sh up)"
  alive etcd || die "etcd is not running; run: scripts/cluster.sh up"
  local t0=$SECONDS
  stop_apiserver
  start_apiserver keep
  log "kube-apiserver restarted on port $APISERVER_PORT in $((SECONDS - t0))s"
}

# All state-changing commands hold one lock per cluster folder, so two
# `up`s (say, two ctest runs sharing a build dir) cannot race.
locked() {
  exec 9>"$dir/.lock"
  flock 9
  "$@"
}

case "${1:-}" in
  up) shift; locked cmd_up "$@" ;;
  down) locked cmd_down ;;
  status) cmd_status ;;
  restart-apiserver) locked cmd_restart_apiserver ;;
  crds) locked install_crds ;;
  kubeconfig) echo "$dir/kubeconfig" ;;
  env)
    echo "export KUBECONFIG=$dir/kubeconfig"
    echo "export SWITCHBOARD_CLUSTER_DIR=$dir"
    echo "export SWITCHBOARD_KUBECONFIG=$dir/kubeconfig"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
