#!/usr/bin/env bash
# The chart's life cycle on a real node: `helm upgrade` with changed values
# keeps the webhook certificate and every password; with two operator
# replicas, deleting the leader's pod hands over without dropping a user from
# the rendered NATS config; `helm uninstall` removes what the chart owns,
# keeps the CRDs and the user's Secrets, and leaves no finalizer stuck.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

node_namespace
ns=$NS
release=sbl
fn="$release-switchboard"
nats="$fn-nats"

if install "$release" "$ns" --set nats.enabled=true --set operator.replicas=2 >"$WORK/install.log" 2>&1; then
  pass "helm install with 2 operator replicas"
else
  fail "helm install: $(cat "$WORK/install.log")"
  dump "$ns"
fi
wait_until 120 pods_ready "$ns" "$release" && pass "5 pods Ready" || {
  fail "pods not Ready"
  dump "$ns"
}

# A user's own Secret in the release namespace, and a backend.
kubectl -n "$ns" create secret generic my-own-secret --from-literal=k=v >/dev/null
apply_backend "$ns" team-a "$nats"
wait_until 180 backend_ready "$ns" team-a && pass "team-a Ready" || {
  fail "team-a not Ready"
  dump "$ns"
}

secret_data() { kubectl -n "$ns" get secret "$1" -o jsonpath='{.data}'; }
ca() { kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].clientConfig.caBundle}'; }
rendered() { kubectl -n "$ns" get secret "$nats-switchboard" -o jsonpath='{.data.switchboard\.conf}' | base64 -d; }
user=$(kubectl -n "$ns" get secret team-a-pubsub-env -o jsonpath='{.data.SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME}' | base64 -d)
[ -n "$user" ] && pass "env Secret names user $user" || fail "env Secret has no username"

# --- upgrade with changed values keeps the certificate and the passwords
ca0=$(ca)
tls0=$(secret_data "$fn-webhook-tls")
env0=$(secret_data team-a-pubsub-env)
conf0=$(rendered)
# shellcheck disable=SC2046
"$HELM" upgrade "$release" "$CHART" -n "$ns" --set nats.enabled=true --set operator.replicas=2 $(image_values) \
  --set webhook.timeoutSeconds=7 --set operator.logLevel=debug --wait --timeout 5m >"$WORK/upgrade.log" 2>&1 ||
  fail "helm upgrade: $(cat "$WORK/upgrade.log")"
[ "$(kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].timeoutSeconds}')" = 7 ] &&
  pass "upgrade applied the new values" || fail "timeoutSeconds not 7 after upgrade"
[ -n "$ca0" ] && [ "$(ca)" = "$ca0" ] && pass "upgrade keeps the webhook CA" || fail "webhook CA changed"
[ "$(secret_data "$fn-webhook-tls")" = "$tls0" ] && pass "upgrade keeps the webhook certificate" || fail "webhook cert changed"
wait_until 120 pods_ready "$ns" "$release" && pass "pods Ready after upgrade" || fail "pods not Ready after upgrade"
wait_until 60 backend_ready "$ns" team-a && pass "team-a Ready after upgrade" || fail "team-a not Ready after upgrade"
[ "$(secret_data team-a-pubsub-env)" = "$env0" ] && pass "upgrade keeps the env Secret (password)" || fail "env Secret changed"
[ "$(rendered)" = "$conf0" ] && pass "upgrade keeps the rendered users (bcrypt hashes)" || fail "rendered config changed on upgrade"
if out=$(engine_pod "$ns" engine-upgrade team-a-pubsub-env 'switchboard pubsub probe'); then
  pass "engine probe works after upgrade"
else fail "probe after upgrade: $out"; fi

# --- leader hand-over: delete the leader's pod while watching the rendered file
# The operator's identity is "<pod name>_<pid>".
holder() {
  local h
  h=$(kubectl -n "$ns" get lease switchboard-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
  echo "${h%_*}"
}
leader=$(holder)
kubectl -n "$ns" get pod "$leader" >/dev/null 2>&1 && pass "lease held by operator pod $leader" ||
  fail "lease holder [$leader] is not a pod"
(
  # Sample the rendered file every 200 ms for 60 s (bounded).
  for ((i = 0; i < 300; i++)); do
    c=$(rendered 2>/dev/null || true)
    grep -q "$user" <<<"$c" || echo "missing at sample $i"
    sleep 0.2
  done
) >"$WORK/samples" &
watcher=$!
kubectl -n "$ns" delete pod "$leader" --wait=false >/dev/null || fail "could not delete pod $leader"
new_leader() {
  local h
  h=$(holder)
  [ -n "$h" ] && [ "$h" != "$leader" ] && kubectl -n "$ns" get pod "$h" >/dev/null 2>&1
}
if wait_until 90 new_leader; then
  pass "another operator took the lease: $(holder)"
else
  fail "no new leader after deleting $leader (holder: $(holder))"
fi
# The new leader reconciles: a new backend gets Ready under it.
apply_backend "$ns" team-c "$nats"
wait_until 180 backend_ready "$ns" team-c && pass "new leader makes team-c Ready" || fail "team-c not Ready under the new leader"
wait "$watcher" || true
if [ -s "$WORK/samples" ]; then
  fail "user $user dropped from the rendered file during hand-over: $(head -3 "$WORK/samples")"
else
  pass "user $user stayed in the rendered file throughout the hand-over (300 samples)"
fi
if out=$(engine_pod "$ns" engine-after team-a-pubsub-env 'switchboard pubsub probe'); then
  pass "team-a's engine still connects after the hand-over"
else fail "probe after hand-over: $out"; fi

# --- uninstall: users delete their backends first (the operator's finalizer
# removes their NATS users), then the chart goes.
kubectl -n "$ns" delete pod --all --wait=false >/dev/null 2>&1 || true
kubectl -n "$ns" delete psb team-a team-c --timeout=90s >/dev/null && pass "backends deleted (finalizers ran)" ||
  fail "deleting backends hung"
"$HELM" uninstall "$release" -n "$ns" --wait --timeout 3m >"$WORK/uninstall.log" 2>&1 && pass "helm uninstall" ||
  fail "helm uninstall: $(cat "$WORK/uninstall.log")"
# The chart's NatsServer has the operator's finalizer: it must be gone, not
# stuck Terminating after the operator left.
if wait_until 60 bash -c "[ -z \"\$(kubectl -n $ns get natssrv -o name)\" ]"; then
  pass "no NatsServer left (finalizer did not stick)"
else
  fail "NatsServer stuck: $(kubectl -n "$ns" get natssrv -o jsonpath='{range .items[*]}{.metadata.name} finalizers={.metadata.finalizers} deleting={.metadata.deletionTimestamp}{"\n"}{end}')"
  # Leave the namespace deletable.
  kubectl -n "$ns" patch natssrv "$nats" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
fi
left=$(kubectl -n "$ns" get deploy,sts,svc,cm,sa,secret,role,rolebinding,pdb -l "app.kubernetes.io/instance=$release" -o name 2>/dev/null)
[ -z "$left" ] && pass "nothing labelled with the release is left in $ns" || fail "left behind: $left"
for obj in validatingwebhookconfiguration/$fn mutatingwebhookconfiguration/$fn clusterrole/$fn-operator \
  clusterrole/$fn-webhook clusterrolebinding/$fn-operator clusterrolebinding/$fn-webhook; do
  kubectl get "$obj" >/dev/null 2>&1 && fail "$obj left behind" || pass "$obj removed"
done
wait_until 60 bash -c "[ -z \"\$(kubectl -n $ns get pods -o name)\" ]" && pass "every pod gone" || fail "pods left: $(kubectl -n "$ns" get pods -o name)"
for crd in pubsubbackends.pubsub.switchboard.dev natsservers.pubsub.switchboard.dev; do
  kubectl get crd "$crd" >/dev/null 2>&1 && pass "CRD $crd kept" || fail "CRD $crd removed"
done
kubectl -n "$ns" get secret my-own-secret >/dev/null 2>&1 && pass "the user's Secret kept" || fail "user Secret removed"
finish
