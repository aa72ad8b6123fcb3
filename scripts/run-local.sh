#!/usr/bin/env bash
# `make run`: Switchboard end to end on this machine.
#
# KUBECONFIG unset: start the local cluster (scripts/cluster.sh up, CRDs
# included), a nats-server on a free loopback port whose config `include`s
# the operator's rendered file, switchboard-config-sync (plays the NATS Helm
# chart's reloader), the webhook when built, and the operator; apply a
# NatsServer and two PubSubBackends; wait until they are Ready; print the env
# Secret (passwords masked unless --show-secrets) and the status; keep
# running until Ctrl-C, then stop everything this script started.
#
# KUBECONFIG set: run the operator against that cluster in the foreground
# (Ctrl-C stops it); nothing else is started or applied.
#
# Usage: scripts/run-local.sh [--show-secrets] [--no-wait]
#   --show-secrets  print the env Secret's password instead of masking it
#   --no-wait       exit after printing instead of running until Ctrl-C (CI smoke)
#   -h, --help      this text
# Environment: BUILD (build dir, default build), RUN_NAMESPACE (default
# switchboard-demo), SWITCHBOARD_TOOLS_DIR (see scripts/cluster.sh).
#
# State and logs: .cache/run-local (logs/NAME.log per process, the cluster
# in cluster/). One run per checkout at a time (a lock on that folder); the
# cleanup stops only the processes this run started, by the pid files of
# scripts/lib/proc.sh, and stops the cluster only when this run started it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${BUILD:-$root/build}"
bin="$build/bin"
show_secrets=false
wait_forever=true
for a in "$@"; do
  case "$a" in
    --show-secrets) show_secrets=true ;;
    --no-wait) wait_forever=false ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) echo "run-local: unknown argument $a (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "run-local: $*" >&2; }
die() { say "error: $*"; exit 1; }
[ -x "$bin/switchboard-operator" ] || die "$bin/switchboard-operator not built; run 'make build'"

if [ -n "${KUBECONFIG:-}" ]; then
  say "KUBECONFIG is set: running the operator against $(kubectl config current-context 2>/dev/null || echo "$KUBECONFIG")"
  exec "$bin/switchboard-operator" --kubeconfig "${KUBECONFIG%%:*}"
fi

state="$root/.cache/run-local"
mkdir -p "$state"
ns="${RUN_NAMESPACE:-switchboard-demo}"
# start, stop, wait_for, free_port: scripts/lib/proc.sh (pid files in run/).
run="$state/run"
logs="$state/logs"
log() { say "$@"; }
. "$root/scripts/lib/proc.sh"

# fd 9: proc.sh's start keeps it from the children, so only this script holds the lock.
exec 9>"$state/.lock"
flock -n 9 || die "another run-local.sh uses $state (one per checkout); stop it first"

# A run killed before its cleanup leaves its processes behind (they have
# their own session): with the lock held they are nobody else's.
for n in operator webhook config-sync nats-server; do stop "$n"; done

# What this run started, in start order; the cleanup stops them in reverse.
started=()
started_cluster=false
run_start() {
  start "$@"
  started+=("$1")
}

cleanup() {
  trap - EXIT INT TERM
  say "stopping"
  local i
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    stop "${started[i]}"
  done
  if $started_cluster; then CLUSTER_DIR="$state/cluster" bash "$root/scripts/cluster.sh" down || true; fi
  say "stopped; logs in $logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. Cluster (etcd + kube-apiserver) with the CRDs.
started_cluster=true
CLUSTER_DIR="$state/cluster" bash "$root/scripts/cluster.sh" up
export KUBECONFIG
KUBECONFIG=$(CLUSTER_DIR="$state/cluster" bash "$root/scripts/cluster.sh" kubeconfig)
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# 2. nats-server including the rendered file (empty until the operator writes it).
nats_port=$(free_port)
monitor_port=$(free_port)
while [ "$monitor_port" = "$nats_port" ]; do monitor_port=$(free_port); done
natsdir="$state/nats"
mkdir -p "$natsdir"
cat >"$natsdir/nats.conf" <<CONF
# Local NATS for 'make run'. switchboard.conf is the operator's rendered
# include, mirrored here by switchboard-config-sync.
listen: 127.0.0.1:$nats_port
http: 127.0.0.1:$monitor_port
include "switchboard.conf"
CONF
printf 'max_payload: 16777216\n' >"$natsdir/switchboard.conf"
rm -f "$natsdir/nats.pid"
run_start nats-server "$(command -v nats-server)" -c "$natsdir/nats.conf" -P "$natsdir/nats.pid"
wait_for "nats-server's pid file" 10 nats-server test -s "$natsdir/nats.pid"
say "nats-server on 127.0.0.1:$nats_port (log $logs/nats-server.log)"

# 3. The reloader; it reports each reload it sees in /varz on the Secret, so
# the operator probes a new user once the server has loaded it.
run_start config-sync "$bin/switchboard-config-sync" --namespace "$ns" --secret local-switchboard \
  --file "$natsdir/switchboard.conf" --pid-file "$natsdir/nats.pid" \
  --monitor-url "http://127.0.0.1:$monitor_port"

# 4. The webhook, when built: a self-signed certificate for 127.0.0.1 and a
# ValidatingWebhookConfiguration whose URL is the loopback port (the local
# API server runs on this machine). failurePolicy Ignore: the operator
# validates on its own anyway.
if [ -x "$bin/switchboard-webhook" ]; then
  whdir="$state/webhook"
  mkdir -p "$whdir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$whdir/tls.key" -out "$whdir/tls.crt" 2>/dev/null
  wh_port=$(free_port)
  run_start webhook "$bin/switchboard-webhook" --bind-address 127.0.0.1 --port "$wh_port" --metrics-port 0 \
    --tls-cert-file "$whdir/tls.crt" --tls-key-file "$whdir/tls.key" --kubeconfig "$KUBECONFIG"
  ca=$(base64 -w0 <"$whdir/tls.crt")
  kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: switchboard-local}
webhooks:
  - name: validate.pubsub.switchboard.dev
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Ignore
    timeoutSeconds: 5
    clientConfig: {url: "https://127.0.0.1:$wh_port/validate", caBundle: "$ca"}
    rules:
      - apiGroups: [pubsub.switchboard.dev]
        apiVersions: [v1alpha1]
        operations: [CREATE, UPDATE]
        resources: [pubsubbackends, natsservers]
YAML
  say "webhook on https://127.0.0.1:$wh_port (log $logs/webhook.log)"
else
  say "webhook not built; the operator validates on its own"
fi

# 5. The operator.
health_port=$(free_port)
metrics_port=$(free_port)
run_start operator "$bin/switchboard-operator" --namespaces "$ns" --health-addr "127.0.0.1:$health_port" \
  --metrics-addr "127.0.0.1:$metrics_port" --probe-interval 30s
say "operator: health http://127.0.0.1:$health_port/readyz metrics http://127.0.0.1:$metrics_port/metrics (log $logs/operator.log)"

# 6. Samples: one NatsServer, two installations.
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: NatsServer
metadata: {name: local}
spec:
  url: nats://127.0.0.1:$nats_port
---
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: hatchet-a}
spec:
  kind: nats
  nats: {serverRef: {name: local}, subjectPrefix: hatchet.a}
---
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: hatchet-b}
spec:
  kind: nats
  nats: {serverRef: {name: local}, subjectPrefix: hatchet.b}
YAML
say "applied NatsServer local and PubSubBackends hatchet-a, hatchet-b in namespace $ns; waiting for Ready"
if ! kubectl wait -n "$ns" --for=condition=Ready psb/hatchet-a psb/hatchet-b --timeout=120s >/dev/null; then
  kubectl get psb -n "$ns" -o yaml >&2 || true
  tail -20 "$logs/operator.log" >&2 || true
  die "backends did not become Ready"
fi

echo
kubectl get natsservers,pubsubbackends -n "$ns"
echo
echo "env Secret hatchet-a-pubsub-env (consume it with envFrom):"
kubectl get secret hatchet-a-pubsub-env -n "$ns" -o json | SHOW="$show_secrets" python3 -c '
import base64, json, os, sys
d = json.load(sys.stdin)["data"]
for k in sorted(d):
    v = base64.b64decode(d[k]).decode()
    if k.endswith("PASSWORD") and os.environ["SHOW"] != "true":
        v = "******** (--show-secrets to print)"
    print(f"  {k}={v}")'
echo
echo "status of hatchet-a:"
kubectl get psb hatchet-a -n "$ns" -o jsonpath='{.status}' | python3 -m json.tool
echo
say "export KUBECONFIG=$KUBECONFIG to use kubectl against this cluster"
if $wait_forever; then
  say "running; Ctrl-C stops everything"
  # In the background, so a SIGTERM runs the cleanup at once.
  while :; do
    sleep 3600 &
    wait $! || true
  done
fi
