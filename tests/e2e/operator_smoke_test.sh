#!/usr/bin/env bash
# The real operator (when built) against the CRDs and the controller
# manager: the status it writes survives the schema, env and config Secrets
# appear, deleting a backend garbage-collects its env Secret after the
# operator's finalizer ran, and a namespace holding backends with finalizers
# finishes deleting (finalizers that cannot wedge a namespace).
. "$(dirname "$0")/lib.sh"

exe="${SWITCHBOARD_BINARY_DIR:-/nonexistent}/bin/switchboard-operator"
if [ ! -x "$exe" ]; then
  echo "skip: $exe not built (configure with the operator component)"
  exit 77
fi
if [ ! -f "$SWITCHBOARD_CLUSTER_DIR/run/kube-controller-manager.pid" ]; then
  echo "skip: needs kube-controller-manager (garbage collection, namespace deletion)"
  exit 77
fi

new_namespace ns
log="$(mktemp)"
"$exe" --kubeconfig "$KUBECONFIG" --namespaces="$ns" --metrics-addr=0 --health-addr=0 --probe-timeout=1s \
  >"$log" 2>&1 &
op=$!
stop_operator() {
  kill "$op" 2>/dev/null && wait "$op" 2>/dev/null
  rm -f "$log"
  cleanup_namespaces
}
trap stop_operator EXIT

kubectl -n "$ns" apply -f "$SRC/crds/samples/pubsubbackend-postgres.yaml" -f "$SRC/crds/samples/natsserver-minimal.yaml" \
  -f "$SRC/crds/samples/pubsubbackend-nats-minimal.yaml" >/dev/null

ready() { [ "$(kubectl -n "$ns" get "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = "$2" ]; }
wait_until 60 ready psb/hatchet-postgres True && pass "postgres backend Ready" ||
  fail "postgres backend not Ready: $(kubectl -n "$ns" get psb hatchet-postgres -o jsonpath='{.status}'; tail -5 "$log")"
kind=$(kubectl -n "$ns" get secret hatchet-postgres-pubsub-env -o jsonpath='{.data.SERVER_MSGQUEUE_PUBSUB_KIND}' | base64 -d)
[ "$kind" = postgres ] && pass "env Secret written" || fail "env Secret kind [$kind]"
hash=$(kubectl -n "$ns" get psb hatchet-postgres -o jsonpath='{.status.envSecretHash}')
[[ "$hash" == sha256:* ]] && pass "status.envSecretHash kept by the schema" || fail "envSecretHash [$hash]"

wait_until 60 ready natssrv/local True && pass "NatsServer Ready (config rendered)" || fail "NatsServer not Ready"
wait_until 30 kubectl -n "$ns" get secret local-switchboard && pass "NATS include Secret written" || fail "no local-switchboard"
# No NATS runs at nats:4222, so the NATS backend reports that, in status.
wait_until 60 ready psb/hatchet-minimal False && pass "NATS backend Ready=False while the server is unreachable" ||
  fail "NATS backend Ready: $(kubectl -n "$ns" get psb hatchet-minimal -o jsonpath='{.status.conditions}')"
d=$(kubectl -n "$ns" get psb hatchet-minimal -o jsonpath='{.status.subject}|{.status.username}')
[ "$d" = "hatchet.pubsub.*|$ns-hatchet-minimal" ] && pass "status.subject and username kept by the schema" || fail "status [$d]"

kubectl -n "$ns" delete psb hatchet-postgres --wait=false >/dev/null
gone() { ! kubectl "$@" >/dev/null 2>&1; }
wait_until 60 gone -n "$ns" get psb hatchet-postgres && pass "operator finalizer released a deleted backend" ||
  fail "backend stuck: $(kubectl -n "$ns" get psb hatchet-postgres -o jsonpath='{.metadata.finalizers}')"
wait_until 60 gone -n "$ns" get secret hatchet-postgres-pubsub-env && pass "owned env Secret garbage-collected" ||
  fail "env Secret survived its backend"

kubectl delete namespace "$ns" --wait=false >/dev/null
wait_until 90 gone get namespace "$ns" && pass "namespace with finalized backends deleted" ||
  fail "namespace stuck: $(kubectl get ns "$ns" -o jsonpath='{.status.conditions}')"

finish
