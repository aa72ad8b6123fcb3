#!/usr/bin/env bash
# Switchboard as its users run it: `helm install charts/switchboard
# --set nats.enabled=true` with the images built from the Dockerfile, on a
# real node (scripts/node.sh). Every pod Ready; the webhook reached through
# its Service with the chart's CA refuses an invalid PubSubBackend with the
# rule's message; the operator under the chart's ServiceAccount and RBAC
# makes a backend Ready; a pod standing in for the Hatchet engine, envFrom
# the env Secret, probes and round-trips; a second backend's engine is denied
# the first one's subjects; with watchNamespaces set, `kubectl auth can-i`
# shows Secrets and Events granted in the watched namespaces and nowhere else,
# and the operator serves a backend in a second watched namespace.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

node_namespace
ns=$NS
release=sbi
fn="$release-switchboard"

# --- every pod Running and Ready: 1 operator, 2 webhook, 1 NATS (+ reloader)
expect_installed "$release" "$ns" "" --set nats.enabled=true
n=$(kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$release" --no-headers | wc -l)
[ "$n" = 4 ] && pass "4 pods (operator, 2 webhook, nats)" || fail "pod count $n, want 4"
uid=$(kubectl -n "$ns" get pod -l app.kubernetes.io/component=operator -o jsonpath='{.items[0].spec.securityContext.runAsUser}')
[ "$uid" = 65532 ] && pass "operator runs as 65532" || fail "operator runAsUser [$uid]"

# --- the webhook, through its Service, with the chart's CA
ep=$(kubectl -n "$ns" get endpoints "$fn-webhook" -o jsonpath='{.subsets[0].addresses[*].ip}')
[ "$(wc -w <<<"$ep")" = 2 ] && pass "webhook Service has 2 ready endpoints" || fail "webhook endpoints [$ep]"
svc=$(kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].clientConfig.service.name}')
[ "$svc" = "$fn-webhook" ] && pass "webhook registered through Service $svc" || fail "webhook clientConfig service [$svc]"

# The NatsServer the chart made is rendered, and NATS runs with its include.
nats="$fn-nats"
wait_until 60 bash -c "[ \"\$(kubectl -n $ns get natssrv $nats -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]" &&
  pass "chart's NatsServer Ready" || fail "NatsServer $nats not Ready: $(kubectl -n "$ns" get natssrv "$nats" -o jsonpath='{.status.conditions}')"

# --- a backend bound to the chart's NATS becomes Ready under the chart's RBAC
apply_backend "$ns" team-a "$nats"
if wait_until 180 backend_ready "$ns" team-a; then
  pass "PubSubBackend team-a Ready (operator in a pod, chart's ServiceAccount)"
else
  fail "team-a not Ready"
  dump "$ns"
fi

# --- an invalid backend is refused by the webhook (through the Service)
# with the rule's message: the same prefix on the same server is a
# cross-object rule only the webhook checks.
out=$(kubectl -n "$ns" apply -f - 2>&1 <<YAML || true
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: copycat}
spec:
  kind: nats
  nats:
    serverRef: {name: $nats}
    subjectPrefix: hatchet.team-a
YAML
)
# (the defaulting webhook runs the same rules, so either may answer first)
expect_contains "$out" '.pubsub.switchboard.dev" denied the request' "webhook refuses through its Service"
expect_contains "$out" '"hatchet.team-a" is already used on NatsServer' "refusal carries the rule's message"
kubectl -n "$ns" get psb copycat >/dev/null 2>&1 && fail "refused backend was stored" || pass "refused backend not stored"

# --- an engine-like pod with envFrom the env Secret: probe and round trip
roundtrip='set -e
switchboard pubsub probe
switchboard pubsub sub --topic roundtrip --count 1 --timeout 30s >/tmp/got 2>/tmp/sub.err &
sub=$!
i=0
until grep -q "subscribed to" /tmp/sub.err; do i=$((i+1)); [ $i -lt 300 ] || exit 3; sleep 0.1; done
switchboard pubsub pub --topic roundtrip "hello from the engine"
wait $sub
echo "received: $(cat /tmp/got)"'
# The image's root file system is read-only: /tmp must be writable.
roundtrip=${roundtrip//\/tmp\//\/dev\/shm\/}
if out=$(engine_pod "$ns" engine-a team-a-pubsub-env "$roundtrip"); then
  pass "engine pod: probe and pub/sub round trip succeed"
else
  fail "engine pod failed: $out"
  dump "$ns"
fi
expect_contains "$out" "received: " "round trip printed the message"
expect_contains "$out" "$(printf '%s' 'hello from the engine' | base64)" "round trip carried the payload"

# --- a second backend's engine is denied the first one's subjects
apply_backend "$ns" team-b "$nats"
wait_until 180 backend_ready "$ns" team-b && pass "PubSubBackend team-b Ready" || fail "team-b not Ready"
expect_isolated "$ns" engine-b team-b-pubsub-env team-a

# --- RBAC as promised, with watchNamespaces set: Secrets and Events only in
# the watched namespaces ($ns, where the release and its NATS are, and $w2),
# nothing anywhere else. The server admits every namespace so a backend in
# $w2 can bind to it.
node_namespace
w2=$NS
node_namespace
other=$NS
# shellcheck disable=SC2046
"$HELM" upgrade "$release" "$CHART" -n "$ns" --set nats.enabled=true $(image_values) \
  --set "operator.watchNamespaces={$ns,$w2}" --set nats.allowedNamespaces.from=All \
  --wait --timeout 5m >"$WORK/upgrade.log" 2>&1 ||
  fail "helm upgrade with watchNamespaces: $(cat "$WORK/upgrade.log")"
op="system:serviceaccount:$ns:$fn-operator"
can() { kubectl auth can-i --as="$1" "${@:2}" 2>/dev/null || true; }
checks=()
for w in "$ns" "$w2"; do
  for verb in get list watch create patch delete; do checks+=("yes|$verb secrets -n $w"); done
  checks+=("yes|create events -n $w" "yes|patch events -n $w" "no|update secrets -n $w")
done
for o in "$other" kube-system default; do
  for verb in get list watch create update patch delete; do checks+=("no|$verb secrets -n $o"); done
  checks+=("no|create events -n $o")
done
checks+=("no|list secrets --all-namespaces" "no|watch secrets --all-namespaces" "no|get secrets --all-namespaces"
  "yes|watch pubsubbackends.pubsub.switchboard.dev --all-namespaces")
for check in "${checks[@]}" \
  "no|delete customresourcedefinitions.apiextensions.k8s.io" \
  "no|create customresourcedefinitions.apiextensions.k8s.io" \
  "no|create pods -n $ns" "no|create pods/exec -n $ns" \
  "no|delete pubsubbackends.pubsub.switchboard.dev -n $ns" \
  "no|update validatingwebhookconfigurations.admissionregistration.k8s.io" \
  "no|create clusterrolebindings.rbac.authorization.k8s.io" \
  "yes|update pubsubbackends.pubsub.switchboard.dev --subresource=status -n $ns" \
  "yes|update leases.coordination.k8s.io -n $ns" "no|update leases.coordination.k8s.io -n $other"; do
  IFS='|' read -r want what <<<"$check"
  # shellcheck disable=SC2086
  got=$(can "$op" $what)
  [ "$got" = "$want" ] && pass "can-i operator $what: $want" || fail "can-i operator $what: got [$got], want $want"
done
rules=$(kubectl get clusterrole "$fn-operator" -o json | jq -c '[.rules[] | select(.apiGroups | index("")) | .resources[]]')
[ "$rules" = "[]" ] && pass "operator ClusterRole has no core rule (Secrets, Events) under watchNamespaces" ||
  fail "operator ClusterRole core resources under watchNamespaces: $rules"
roles=$(kubectl get roles -A -l app.kubernetes.io/instance="$release" -o jsonpath='{range .items[?(@.metadata.name=="'"$fn-operator"'")]}{.metadata.namespace}{" "}{end}')
[ "$roles" = "$(printf '%s\n' "$ns" "$w2" | sort | tr '\n' ' ')" ] && pass "Role $fn-operator in each watched namespace: $roles" ||
  fail "Roles $fn-operator in [$roles], want $ns and $w2"

# The operator in its pod, restricted to $ns and $w2, still serves $ns and
# serves $w2: a backend there gets its Secrets written there (env and
# credentials) and its user into the server's config Secret in $ns.
wait_until 120 pods_ready "$ns" "$release" && pass "pods Ready after the watchNamespaces upgrade" || fail "pods not Ready after upgrade"
kubectl -n "$ns" annotate psb team-a switchboard.dev/touch="$RANDOM" --overwrite >/dev/null
wait_until 60 backend_ready "$ns" team-a && pass "team-a still Ready under watchNamespaces" || fail "team-a lost Ready"
kubectl -n "$w2" apply -f - >/dev/null <<YAML
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: team-c}
spec:
  kind: nats
  nats:
    serverRef: {name: $nats, namespace: $ns}
    subjectPrefix: hatchet.team-c
  output: {secretName: team-c-pubsub-env}
YAML
if wait_until 180 backend_ready "$w2" team-c; then
  pass "PubSubBackend team-c in the second watched namespace Ready (Secrets through its Role)"
else
  fail "team-c not Ready in $w2"
  dump "$w2"
fi
kubectl -n "$w2" get secret team-c-pubsub-env >/dev/null 2>&1 && pass "env Secret written in $w2" || fail "no env Secret in $w2"
# The pod started with the new flags (the old one, cluster-wide until the
# upgrade took its Secrets away, may still be terminating).
pod=$(kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$release,app.kubernetes.io/component=operator" -o json |
  jq -r --arg a "--namespaces=$ns,$w2" '.items[] | select(.metadata.deletionTimestamp == null and (.spec.containers[0].args | index($a))) | .metadata.name' | head -1)
kubectl -n "$ns" logs "$pod" >"$WORK/operator.log" 2>&1 || true
if [ -n "$pod" ] && ! grep -qEi "forbidden|PermissionDenied" "$WORK/operator.log"; then
  pass "operator pod $pod (--namespaces=$ns,$w2) logged no forbidden call"
else
  fail "operator pod [$pod] log: $(grep -Ei "forbidden|PermissionDenied" "$WORK/operator.log" | head -3)"
fi

# Users delete their backends before uninstalling the operator (its
# finalizer removes their NATS users).
kubectl -n "$ns" delete pod engine-a engine-b --wait=false >/dev/null 2>&1 || true
kubectl -n "$w2" delete psb team-c --timeout=60s >/dev/null 2>&1 || fail "deleting team-c hung"
kubectl -n "$ns" delete psb team-a team-b --timeout=60s >/dev/null 2>&1 && pass "backends deleted (finalizers ran)" ||
  fail "deleting backends hung"
[ "$FAILURES" = 0 ] || dump "$ns"
finish
