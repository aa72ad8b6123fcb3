#!/usr/bin/env bash
# The Helm chart against the real API server: lint, render, the rendered
# NATS config passes `nats-server -t` with an operator-style include, every
# rendered object passes server-side dry-run, `helm install` creates the
# objects (no nodes run pods here, so only their existence and wiring are
# checked: the webhook configurations are live, RBAC grants what the
# operator and webhook need and nothing more, the certificate survives an
# upgrade), and `helm uninstall` removes the webhooks so other tests are not
# affected.
. "$(dirname "$0")/lib.sh"

tools="${SWITCHBOARD_TOOLS_DIR:-$SRC/.cache/tools}"
HELM="$tools/bin/helm"
[ -x "$HELM" ] || {
  echo "helm not found at $HELM: run scripts/build-tools.sh helm" >&2
  exit 1
}
chart="$SRC/charts/switchboard"
work=$(mktemp -d)
export HELM_CACHE_HOME="$work/helm-cache" HELM_CONFIG_HOME="$work/helm-config" HELM_DATA_HOME="$work/helm-data"
# Offline rendering assumes this Kubernetes version (the pinned API server's);
# helm built without release ldflags would assume 1.20.
kv=(--kube-version "$("$tools/bin/kube-apiserver" --version | awk '{print $2}')")

new_namespace ns
release="sb$RANDOM"
cleanup() {
  "$HELM" uninstall "$release" -n "$ns" --wait=false >/dev/null 2>&1 || true
  cleanup_namespaces
  rm -rf "$work"
}
trap cleanup EXIT

# --- the chart ships exactly the CRDs of crds/
out=$(bash "$SRC/scripts/sync-chart-crds.sh" --check 2>&1) && pass "chart CRDs match crds/" || fail "$out"

# --- lint with the value sets users will try
for set in "" "nats.enabled=true" "nats.enabled=true,nats.replicas=3" "webhook.certificate.certManager=true" \
  "operator.watchNamespaces={team-a,team-b},webhook.replicas=1" "webhook.enabled=false" "operator.enabled=false" \
  "metrics.serviceMonitor.enabled=true,metrics.serviceMonitor.labels.release=prom"; do
  args=("${kv[@]}")
  [ -n "$set" ] && args+=(--set "$set")
  if out=$("$HELM" lint --strict "$chart" "${args[@]}" 2>&1); then
    pass "helm lint --strict ${set:-(defaults)}"
  else
    fail "helm lint ${set:-(defaults)}: $out"
  fi
done

# --- values.schema.json turns a wrong value into an error naming it
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set webhook.failurePolicy=Sometimes 2>&1 || true)
expect_contains "$out" "at '/webhook/failurePolicy': value must be one of 'Fail', 'Ignore'" "schema rejects a bad failurePolicy"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.isolation=Users,webhook.timeoutSeconds=60 2>&1 || true)
expect_contains "$out" "at '/nats/isolation'" "schema rejects a bad isolation"
expect_contains "$out" "at '/webhook/timeoutSeconds': maximum: got 60, want 30" "schema rejects a webhook timeout above 30 s"

# --- render
"$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set nats.enabled=true,nats.replicas=3 >"$work/all.yaml"
kinds=$(grep '^kind:' "$work/all.yaml" | sort | uniq -c | awk '{print $3 "=" $1}' | tr '\n' ' ')
for want in ClusterRole=4 ClusterRoleBinding=2 ConfigMap=1 Deployment=2 MutatingWebhookConfiguration=1 NatsServer=1 \
  PodDisruptionBudget=1 Role=1 RoleBinding=1 Secret=1 Service=5 ServiceAccount=2 StatefulSet=1 ValidatingWebhookConfiguration=1; do
  expect_contains "$kinds" "$want " "rendered $want"
done
out=$("$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set operator.watchNamespaces='{team-a,team-b}' \
  --show-only templates/operator-deployment.yaml)
expect_contains "$out" "--namespaces=team-a,team-b" "watchNamespaces becomes --namespaces"
expect_contains "$out" "--leader-elect=true" "leader election on by default"
out=$("$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set webhook.certificate.certManager=true)
expect_contains "$out" "cert-manager.io/inject-ca-from: $ns/$release-switchboard-webhook" "cert-manager mode injects the CA"
out=$("$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set operator.serviceAccount.create=false 2>&1 || true)
expect_contains "$out" "operator.serviceAccount.name is required" "missing SA name is a clear error"

# --- the binaries accept the flags the chart gives them
"$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set operator.watchNamespaces='{team-a,team-b}' \
  --show-only templates/operator-deployment.yaml --show-only templates/webhook-deployment.yaml >"$work/deploy.yaml"
for comp in operator webhook; do
  exe="${SWITCHBOARD_BINARY_DIR:-/nonexistent}/bin/switchboard-$comp"
  if [ ! -x "$exe" ]; then
    fail "$exe is not built (the chart test needs the build tree): flags of the $comp Deployment not checked"
    continue
  fi
  mapfile -t args < <(kubectl create --dry-run=client -o json -f "$work/deploy.yaml" | jq -r --arg n "$release-switchboard-$comp" \
    '(.items // [.])[] | select(.kind == "Deployment" and .metadata.name == $n) | .spec.template.spec.containers[0].args[]')
  # --help last: both parsers reject an unknown flag before they print help.
  if out=$("$exe" "${args[@]}" --help 2>&1 >/dev/null); then
    pass "switchboard-$comp accepts the chart's flags: ${args[*]}"
  else
    fail "switchboard-$comp rejects the chart's flags ${args[*]}: $out"
  fi
done

# --- the bundled NATS config + an operator-rendered include pass nats-server -t
mkdir -p "$work/nats/switchboard"
"$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set nats.enabled=true,nats.replicas=3 \
  --show-only templates/nats.yaml | awk '/^  nats.conf: \|/{on=1; next} on && /^---/{exit} on && /^[^ ]/{exit} on {sub(/^    /, ""); print}' \
  >"$work/nats/nats.conf"
cp "$(dirname "$0")/testdata/switchboard.conf" "$work/nats/switchboard/switchboard.conf"
expect_contains "$(cat "$work/nats/nats.conf")" "include ./switchboard/switchboard.conf" "nats.conf includes the rendered file"
if out=$(cd "$work/nats" && POD_NAME=nats-0 nats-server -t -c "$work/nats/nats.conf" 2>&1); then
  pass "nats-server -t accepts nats.conf with the include"
else
  fail "nats-server -t: $out"$'\n'"$(cat "$work/nats/nats.conf")"
fi

# --- every rendered object is valid for the API server (incl. the NatsServer CR)
if out=$(kubectl apply --dry-run=server -n "$ns" -f "$work/all.yaml" 2>&1); then
  pass "rendered chart passes server-side dry-run"
else
  fail "server-side dry-run: $out"
fi

# --- install
"$HELM" install "$release" "$chart" -n "$ns" --set nats.enabled=true >"$work/install.log" 2>&1 ||
  fail "helm install: $(cat "$work/install.log")"
fn="$release-switchboard"
notes=$(cat "$work/install.log")
expect_contains "$notes" "Give a Hatchet installation its pub/sub" "install prints NOTES"
expect_contains "$notes" "kubectl -n $ns get natssrv $fn-nats" "NOTES name the bundled NatsServer"
for obj in deployment/$fn-operator deployment/$fn-webhook service/$fn-webhook service/$fn-operator-metrics \
  service/$fn-webhook-metrics serviceaccount/$fn-operator serviceaccount/$fn-webhook secret/$fn-webhook-tls \
  statefulset/$fn-nats configmap/$fn-nats-config natsserver/$fn-nats role/$fn-leader-election; do
  kubectl -n "$ns" get "$obj" >/dev/null 2>&1 && pass "installed $obj" || fail "missing $obj"
done
for obj in clusterrole/$fn-operator clusterrole/$fn-webhook clusterrolebinding/$fn-operator \
  validatingwebhookconfiguration/$fn mutatingwebhookconfiguration/$fn; do
  kubectl get "$obj" >/dev/null 2>&1 && pass "installed $obj" || fail "missing $obj"
done

# The webhook's serving certificate verifies against the caBundle the API
# server uses, for the Service's DNS name.
kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d >"$work/ca.crt"
kubectl -n "$ns" get secret "$fn-webhook-tls" -o jsonpath='{.data.tls\.crt}' | base64 -d >"$work/tls.crt"
if out=$(openssl verify -CAfile "$work/ca.crt" -verify_hostname "$fn-webhook.$ns.svc" "$work/tls.crt" 2>&1); then
  pass "serving cert verifies for $fn-webhook.$ns.svc"
else
  fail "cert verify: $out"
fi

# The API server really calls the webhook: with no pod behind the Service,
# admission of a PubSubBackend fails (failurePolicy Fail).
out=$(kubectl -n "$ns" apply -f "$SRC/crds/samples/pubsubbackend-postgres.yaml" 2>&1 || true)
expect_contains "$out" 'failed calling webhook "default.pubsub.switchboard.dev"' "API server calls the installed webhook"
kubectl -n "$ns" get psb hatchet-postgres >/dev/null 2>&1 && fail "object stored although the webhook was down" ||
  pass "nothing stored while the webhook is unreachable"

# RBAC: what the operator and webhook may and may not do.
op="system:serviceaccount:$ns:$fn-operator"
wh="system:serviceaccount:$ns:$fn-webhook"
can() { kubectl auth can-i --as="$1" "${@:2}" 2>/dev/null || true; }
for check in "$op|yes|update pubsubbackends.pubsub.switchboard.dev --subresource=status -n team-x" \
  "$op|yes|update natsservers.pubsub.switchboard.dev --subresource=finalizers -n team-x" \
  "$op|no|create pubsubbackends.pubsub.switchboard.dev -n team-x" \
  "$op|yes|watch pubsubbackends.pubsub.switchboard.dev --all-namespaces" \
  "$op|yes|create secrets -n team-x" "$op|yes|create events -n team-x" \
  "$op|yes|update leases.coordination.k8s.io -n $ns" "$op|no|update leases.coordination.k8s.io -n team-x" \
  "$op|no|delete pubsubbackends.pubsub.switchboard.dev -n team-x" "$op|no|create pods -n team-x" \
  "$wh|yes|list natsservers.pubsub.switchboard.dev --all-namespaces" "$wh|no|get secrets -n team-x" \
  "$wh|no|update pubsubbackends.pubsub.switchboard.dev -n team-x" \
  "$wh|no|update pubsubbackends.pubsub.switchboard.dev --subresource=status -n team-x"; do
  IFS='|' read -r who want what <<<"$check"
  # shellcheck disable=SC2086
  got=$(can "$who" $what)
  [ "$got" = "$want" ] && pass "can-i ${who##*:} $what: $want" || fail "can-i ${who##*:} $what: got [$got], want $want"
done

# Namespace users get the API through the built-in roles (aggregated by the
# controller manager's clusterrole-aggregation controller).
if [ -f "$SWITCHBOARD_CLUSTER_DIR/run/kube-controller-manager.pid" ]; then
  kubectl -n "$ns" create rolebinding alice-edit --clusterrole=edit --user=alice >/dev/null
  kubectl -n "$ns" create rolebinding bob-view --clusterrole=view --user=bob >/dev/null
  wait_until 30 bash -c "[ \"\$(kubectl auth can-i --as=alice create pubsubbackends.pubsub.switchboard.dev -n $ns)\" = yes ]" &&
    pass "edit role may create PubSubBackends" || fail "edit role lacks PubSubBackends"
  [ "$(can alice create natsservers.pubsub.switchboard.dev -n "$ns")" = yes ] && pass "edit role may create NatsServers" ||
    fail "edit role lacks NatsServers"
  [ "$(can alice update pubsubbackends.pubsub.switchboard.dev --subresource=status -n "$ns")" = no ] && pass "edit role may not write status" ||
    fail "edit role may write status"
  wait_until 30 bash -c "[ \"\$(kubectl auth can-i --as=bob list pubsubbackends.pubsub.switchboard.dev -n $ns)\" = yes ]" &&
    pass "view role may list PubSubBackends" || fail "view role cannot list"
  [ "$(can bob create pubsubbackends.pubsub.switchboard.dev -n "$ns")" = no ] && pass "view role may not create" ||
    fail "view role may create"
else
  echo "skip: no kube-controller-manager, aggregated roles not checked"
fi

# --- upgrade keeps the webhook certificate (looked up, not regenerated)
ca_before=$(kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
"$HELM" upgrade "$release" "$chart" -n "$ns" --set nats.enabled=true --set webhook.timeoutSeconds=7 >"$work/upgrade.log" 2>&1 ||
  fail "helm upgrade: $(cat "$work/upgrade.log")"
ca_after=$(kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
t=$(kubectl get validatingwebhookconfiguration "$fn" -o jsonpath='{.webhooks[0].timeoutSeconds}')
[ "$t" = 7 ] && pass "upgrade applied new values" || fail "timeoutSeconds after upgrade: $t"
[ -n "$ca_before" ] && [ "$ca_before" = "$ca_after" ] && pass "upgrade keeps the webhook CA" || fail "CA changed on upgrade"

# --- uninstall removes the webhooks; admission works without them again
"$HELM" uninstall "$release" -n "$ns" --wait >/dev/null
kubectl get validatingwebhookconfiguration "$fn" >/dev/null 2>&1 && fail "validating webhook left behind" ||
  pass "uninstall removed the validating webhook"
kubectl get mutatingwebhookconfiguration "$fn" >/dev/null 2>&1 && fail "mutating webhook left behind" ||
  pass "uninstall removed the mutating webhook"
kubectl get crd pubsubbackends.pubsub.switchboard.dev >/dev/null 2>&1 && pass "CRDs stay after uninstall (Helm never deletes crds/)" ||
  fail "CRDs deleted"
# The API server caches webhook configurations briefly: poll until admission passes.
if wait_until 30 kubectl -n "$ns" apply -f "$SRC/crds/samples/pubsubbackend-postgres.yaml"; then
  pass "PubSubBackend admitted after uninstall"
else
  fail "PubSubBackend still rejected after uninstall: $(kubectl -n "$ns" apply -f "$SRC/crds/samples/pubsubbackend-postgres.yaml" 2>&1)"
fi

finish
