#!/usr/bin/env bash
# The Helm chart against the real API server: lint, render (both
# provisioning modes: in AuthCallout the authorizer Deployment, its PDB and
# read-only RBAC, NATS without a reloader), the rendered NATS config passes
# `nats-server -t` of the pinned release with an operator-style include of
# each mode, every rendered object passes server-side dry-run, `helm install` creates the
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
  [ -z "${op_pid:-}" ] || kill "$op_pid" 2>/dev/null || true
  "$HELM" uninstall "$release" -n "$ns" --wait=false >/dev/null 2>&1 || true
  "$HELM" uninstall "${release}w" -n "$ns" --wait=false >/dev/null 2>&1 || true
  cleanup_namespaces
  rm -rf "$work"
}
trap cleanup EXIT

# --- the chart ships exactly the CRDs of crds/
out=$(bash "$SRC/scripts/sync-chart-crds.sh" --check 2>&1) && pass "chart CRDs match crds/" || fail "$out"

# --- lint with the value sets users will try
for set in "" "nats.enabled=true" "nats.enabled=true,nats.replicas=3" "webhook.certificate.certManager=true" \
  "nats.enabled=true,nats.replicas=3,nats.provisioning.mode=AuthCallout" "nats.enabled=true,nats.usage.systemUser=true" \
  "authorizer.enabled=true,operator.watchNamespaces={team-a,team-b}" \
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
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.provisioning.mode=Callout 2>&1 || true)
expect_contains "$out" "at '/nats/provisioning/mode': value must be one of 'IncludeFile', 'AuthCallout'" "schema rejects a bad provisioning mode"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.provisioning.authCallout.account=SYS 2>&1 || true)
expect_contains "$out" "at '/nats/provisioning/authCallout/account'" "schema rejects SYS as the callout account"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.enabled=true,nats.provisioning.mode=AuthCallout,nats.isolation=Accounts 2>&1 || true)
expect_contains "$out" "grep -q default_sentinel" "AuthCallout with Accounts waits for the operator-mode config"
expect_contains "$out" "mountPath: /data/resolver" "AuthCallout with Accounts mounts the resolver store"
expect_contains "$out" "isolation: Accounts" "AuthCallout with Accounts: the NatsServer says Accounts"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.usage.systemUser=yes 2>&1 || true)
expect_contains "$out" "at '/nats/usage/systemUser'" "schema rejects a systemUser that is not a boolean"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.enabled=true,nats.usage.systemUser=true --show-only templates/nats.yaml)
expect_contains "$out" $'usage:\n    systemUser: true' "nats.usage.systemUser: the NatsServer asks for the system user"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.enabled=true --show-only templates/nats.yaml)
[[ "$out" != *"systemUser"* ]] && pass "no system user by default" || fail "the default NatsServer asks for a system user"
out=$("$HELM" template "$release" "$chart" "${kv[@]}" --set nats.enabled=true,nats.usage.systemUser=true,nats.provisioning.mode=AuthCallout --show-only templates/nats.yaml)
[[ "$out" != *"systemUser"* ]] && pass "AuthCallout: no spec.usage (its system user is in the callout Secret)" ||
  fail "AuthCallout NatsServer with spec.usage.systemUser"

# --- one nats-server version: the chart's default upstream tag names the
# release the tools and the node's image are built at
. "$SRC/scripts/tool-versions.sh"
tag=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["nats"]["image"]["tag"])' "$chart/values.yaml")
[ "${tag%%-*}" = "$NATS_SERVER_VERSION" ] && pass "nats.image.tag $tag is NATS_SERVER_VERSION $NATS_SERVER_VERSION" ||
  fail "nats.image.tag $tag, NATS_SERVER_VERSION $NATS_SERVER_VERSION"

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

# --- the operator's RBAC as rendered, per mode
fn="$release-switchboard"
# rbac_json VALUES... -> templates/rbac.yaml rendered with VALUES, as one
# JSON array of objects
rbac_json() {
  "$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" "$@" --show-only templates/rbac.yaml |
    kubectl create --dry-run=client -o json -f - | jq -cs '[.[] | (.items // [.])[]]'
}
# rules_of KIND NAME -> "resource:verbs" of that object's rules, one a line
rules_of() {
  jq -r --arg k "$1" --arg n "$2" '.[] | select(.kind == $k and .metadata.name == $n) | .rules[] |
    .resources[] as $r | "\($r):\(.verbs | join(","))"'
}
ns_verbs=$'secrets:get,list,watch,create,patch,delete\nevents:create,patch'
r=$(rbac_json)
got=$(rules_of ClusterRole "$fn-operator" <<<"$r" | grep -E '^(secrets|events):' || true)
[ "$got" = "$ns_verbs" ] && pass "cluster-wide mode: the ClusterRole grants Secrets and Events (no update)" ||
  fail "cluster-wide ClusterRole core rules: [$got]"
got=$(jq -r '[.[] | select(.kind == "Role") | .metadata.namespace + "/" + .metadata.name] | join(" ")' <<<"$r")
[ "$got" = "$ns/$fn-leader-election" ] && pass "cluster-wide mode: one Role, the Lease's" || fail "cluster-wide Roles: [$got]"
r=$(rbac_json --set operator.watchNamespaces='{team-a,team-b}')
got=$(jq -r '[.[] | select(.kind | startswith("Cluster")) | .rules[]? | select(.resources | index("secrets") or index("events"))] | length' <<<"$r")
[ "$got" = 0 ] && pass "watchNamespaces: no ClusterRole rule on Secrets or Events" || fail "watchNamespaces: $got cluster-wide Secret/Event rules"
for kind in Role RoleBinding; do
  got=$(jq -r --arg k "$kind" --arg n "$fn-operator" '[.[] | select(.kind == $k and .metadata.name == $n) | .metadata.namespace] | join(" ")' <<<"$r")
  [ "$got" = "team-a team-b" ] && pass "watchNamespaces: $kind $fn-operator in team-a and team-b" || fail "watchNamespaces: $kind $fn-operator in [$got]"
done
for w in team-a team-b; do
  got=$(jq --arg w "$w" '[.[] | select(.kind == "Role" and .metadata.namespace == $w)]' <<<"$r" | rules_of Role "$fn-operator")
  [ "$got" = "$ns_verbs" ] && pass "watchNamespaces: the Role in $w grants Secrets and Events" || fail "Role in $w: [$got]"
  got=$(jq -r --arg w "$w" '.[] | select(.kind == "RoleBinding" and .metadata.namespace == $w) |
    .roleRef.kind + "/" + .roleRef.name + " " + (.subjects[] | .kind + "/" + .namespace + "/" + .name)' <<<"$r")
  [ "$got" = "Role/$fn-operator ServiceAccount/$ns/$fn-operator" ] && pass "watchNamespaces: $w's RoleBinding binds the operator's ServiceAccount" ||
    fail "RoleBinding in $w: [$got]"
done
got=$(rules_of Role "$fn-leader-election" <<<"$r")
[ "$got" = "leases:get,list,watch,create,update,patch,delete" ] && pass "the leader-election Role holds only Leases" || fail "leader-election Role: [$got]"
out=$("$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set nats.enabled=true,operator.watchNamespaces='{team-a}' 2>&1 || true)
expect_contains "$out" "operator.watchNamespaces must include the release namespace $ns" "nats.enabled with the release namespace unwatched is a clear error"
out=$("$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set nats.enabled=true,operator.watchNamespaces="{team-a,$ns}" 2>&1) &&
  pass "nats.enabled with the release namespace watched renders" || fail "nats.enabled, release namespace watched: $out"
out=$("$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set operator.watchNamespaces='{team-a,team-a}' 2>&1 || true)
expect_contains "$out" "at '/operator/watchNamespaces'" "schema rejects a namespace listed twice"

# --- AuthCallout mode rendered: the authorizer Deployment (2 replicas,
# spread, PDB, readiness on /readyz), its read-only RBAC per mode, NATS with
# no reloader and a Secret volume it must wait for
callout=(--set nats.enabled=true,nats.replicas=3,nats.provisioning.mode=AuthCallout)
render_json() {
  "$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" "$@" | kubectl create --dry-run=client -o json -f - |
    jq -cs '[.[] | (.items // [.])[]]'
}
obj() { jq -c --arg k "$1" --arg n "$2" '.[] | select(.kind == $k and .metadata.name == $n)'; }
r=$(render_json "${callout[@]}")
d=$(obj Deployment "$fn-authorizer" <<<"$r")
[ "$(jq -r .spec.replicas <<<"$d")" = 2 ] && pass "callout: authorizer Deployment with 2 replicas" || fail "callout: authorizer Deployment: [$d]"
got=$(jq -r '.spec.template.spec.containers[0] | .command[0] + " " + (.args | join(" "))' <<<"$d")
[ "$got" = "/usr/local/bin/switchboard-authorizer --metrics-addr=:8080 --health-addr=:8081 --log-level=info --servers=$ns/$fn-nats" ] &&
  pass "callout: the authorizer serves the chart's NATS: $got" || fail "callout: authorizer command [$got]"
got=$(jq -r '.spec.template.spec.containers[0].readinessProbe.httpGet | .path + " " + .port' <<<"$d")
[ "$got" = "/readyz health" ] && pass "callout: authorizer readiness on /readyz" || fail "callout: authorizer readiness [$got]"
got=$(jq -r '.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm |
  .topologyKey + " " + .labelSelector.matchLabels["app.kubernetes.io/component"]' <<<"$d")
[ "$got" = "kubernetes.io/hostname authorizer" ] && pass "callout: authorizer replicas prefer different nodes" || fail "callout: anti-affinity [$got]"
got=$(jq -r '.spec.strategy.rollingUpdate.maxUnavailable' <<<"$d")
[ "$got" = 0 ] && pass "callout: an authorizer rollout keeps every replica until its successor is ready" || fail "callout: maxUnavailable [$got]"
got=$(obj PodDisruptionBudget "$fn-authorizer" <<<"$r" | jq -r '"\(.spec.minAvailable) \(.spec.selector.matchLabels["app.kubernetes.io/component"])"')
[ "$got" = "1 authorizer" ] && pass "callout: authorizer PodDisruptionBudget minAvailable 1" || fail "callout: authorizer PDB [$got]"
got=$(obj Service "$fn-authorizer-metrics" <<<"$r" | jq -r '.spec.ports[0] | "\(.port) \(.targetPort)"')
[ "$got" = "8080 metrics" ] && pass "callout: authorizer metrics Service" || fail "callout: authorizer metrics Service [$got]"
got=$(rules_of ClusterRole "$fn-authorizer" <<<"$r")
[ "$got" = $'pubsubbackends:get,list,watch\nnatsservers:get,list,watch\nsecrets:get,list,watch' ] &&
  pass "callout: authorizer ClusterRole reads both kinds and Secrets (every namespace watched)" || fail "callout: authorizer ClusterRole [$got]"
got=$(obj ClusterRoleBinding "$fn-authorizer" <<<"$r" | jq -r '.subjects[] | .namespace + "/" + .name')
[ "$got" = "$ns/$fn-authorizer" ] && pass "callout: authorizer ClusterRoleBinding binds its ServiceAccount" || fail "callout: binding [$got]"
sts=$(obj StatefulSet "$fn-nats" <<<"$r")
got=$(jq -r '[.spec.template.spec.containers[].name] | join(" ")' <<<"$sts")
[ "$got" = nats ] && pass "callout: NATS pods run no reloader" || fail "callout: NATS containers [$got]"
got=$(jq -r '.spec.template.spec.shareProcessNamespace // false' <<<"$sts")
[ "$got" = false ] && pass "callout: no shared process namespace (nothing signals NATS)" || fail "callout: shareProcessNamespace [$got]"
got=$(jq -r '.spec.template.spec.volumes[] | select(.name == "switchboard") | .secret | "\(.secretName) \(.optional)"' <<<"$sts")
[ "$got" = "$fn-nats-switchboard false" ] && pass "callout: the config Secret volume is not optional (the pod waits for it)" ||
  fail "callout: config volume [$got]"
expect_contains "$(jq -r '.spec.template.spec.containers[0].command[2]' <<<"$sts")" "grep -q auth_callout" \
  "callout: nats-server starts only on the callout file"
got=$(obj NatsServer "$fn-nats" <<<"$r" | jq -r '.spec.provisioning | "\(.mode) \(.authCallout.account)"')
[ "$got" = "AuthCallout HATCHET" ] && pass "callout: the chart's NatsServer says AuthCallout" ||
  fail "callout: NatsServer provisioning [$got]"
r=$(render_json --set nats.enabled=true)
got=$(jq -r '[.[] | select(.metadata.labels["app.kubernetes.io/component"] == "authorizer") | .kind] | join(" ")' <<<"$r")
[ -z "$got" ] && pass "file mode: no authorizer object" || fail "file mode renders authorizer objects: $got"
got=$(obj StatefulSet "$fn-nats" <<<"$r" | jq -r '[.spec.template.spec.containers[].name] | join(" ")')
[ "$got" = "nats reloader" ] && pass "file mode: NATS with its reloader" || fail "file mode: NATS containers [$got]"
got=$(obj NatsServer "$fn-nats" <<<"$r" | jq -c '.spec.provisioning // "default"')
[ "$got" = '"default"' ] && pass "file mode: the NatsServer keeps the default provisioning" || fail "file mode: provisioning [$got]"
r=$(render_json --set authorizer.enabled=true,operator.watchNamespaces='{team-a,team-b}')
got=$(jq -r '[.[] | select(.kind | startswith("Cluster")) | .rules[]? | select(.resources | index("secrets"))] | length' <<<"$r")
[ "$got" = 0 ] && pass "authorizer, watchNamespaces: no cluster-wide Secret rule" || fail "authorizer, watchNamespaces: $got cluster-wide Secret rules"
for w in team-a team-b; do
  got=$(jq --arg w "$w" '[.[] | select(.kind == "Role" and .metadata.namespace == $w)]' <<<"$r" | rules_of Role "$fn-authorizer")
  [ "$got" = "secrets:get,list,watch" ] && pass "authorizer, watchNamespaces: the Role in $w reads Secrets only" || fail "authorizer Role in $w: [$got]"
  got=$(jq -r --arg w "$w" --arg n "$fn-authorizer" '.[] | select(.kind == "RoleBinding" and .metadata.namespace == $w and .metadata.name == $n) |
    .roleRef.name + " " + (.subjects[] | .namespace + "/" + .name)' <<<"$r")
  [ "$got" = "$fn-authorizer $ns/$fn-authorizer" ] && pass "authorizer, watchNamespaces: $w's RoleBinding" || fail "authorizer RoleBinding in $w: [$got]"
done
got=$(obj Deployment "$fn-authorizer" <<<"$r" | jq -r '.spec.template.spec.containers[0].args | join(" ")')
[ "$got" = "--metrics-addr=:8080 --health-addr=:8081 --log-level=info --namespaces=team-a,team-b" ] &&
  pass "authorizer.enabled without the chart's NATS: every AuthCallout server it watches: $got" || fail "authorizer args [$got]"

# --- the binaries accept the flags the chart gives them
"$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set operator.watchNamespaces="{team-a,$ns}" "${callout[@]}" \
  --show-only templates/operator-deployment.yaml --show-only templates/webhook-deployment.yaml \
  --show-only templates/authorizer-deployment.yaml >"$work/deploy.yaml"
for comp in operator webhook authorizer; do
  exe="${SWITCHBOARD_BINARY_DIR:-/nonexistent}/bin/switchboard-$comp"
  if [ ! -x "$exe" ]; then
    fail "$exe is not built (the chart test needs the build tree): flags of the $comp Deployment not checked"
    continue
  fi
  mapfile -t args < <(kubectl create --dry-run=client -o json -f "$work/deploy.yaml" | jq -r --arg n "$release-switchboard-$comp" \
    '(.items // [.])[] | select(.kind == "Deployment" and .metadata.name == $n) | .spec.template.spec.containers[0].args[]')
  # --help last: the parsers reject an unknown flag before they print help.
  if out=$("$exe" "${args[@]}" --help 2>&1 >/dev/null); then
    pass "switchboard-$comp accepts the chart's flags: ${args[*]}"
  else
    fail "switchboard-$comp rejects the chart's flags ${args[*]}: $out"
  fi
done

# --- the bundled NATS config + an operator-rendered include pass `nats-server
# -t` of the chart's release (NATS_SERVER_VERSION, built into the tools), in
# both modes: the users' include file, and the static callout file
nats_server="$tools/bin/nats-server-callout"
[ -x "$nats_server" ] || fail "$nats_server missing: run scripts/build-tools.sh nats-server-callout"
# (and IncludeFile with nats.usage.systemUser: the file ends with the system
# account, which the bundled nats.conf must not declare again)
for mode in IncludeFile:switchboard.conf:false AuthCallout:switchboard-callout.conf:false \
  IncludeFile:switchboard-system.conf:true; do
  system_user=${mode##*:}
  mode=${mode%:*}
  fixture=${mode#*:}
  mode=${mode%%:*}
  [ "$system_user" = true ] && mode=$mode-system
  mkdir -p "$work/nats-$mode/switchboard"
  # Rendered to a file first: awk stops reading at the end of nats.conf, and
  # helm writing into a closed pipe would fail the pipeline (pipefail).
  "$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" --set nats.enabled=true,nats.replicas=3 \
    --set nats.provisioning.mode="${mode%-system}",nats.usage.systemUser="$system_user" \
    --show-only templates/nats.yaml >"$work/nats-$mode.yaml"
  awk '/^  nats.conf: \|/{on=1; next} on && /^---/{exit} on && /^[^ ]/{exit} on {sub(/^    /, ""); print}' \
    "$work/nats-$mode.yaml" >"$work/nats-$mode/nats.conf"
  cp "$(dirname "$0")/testdata/$fixture" "$work/nats-$mode/switchboard/switchboard.conf"
  expect_contains "$(cat "$work/nats-$mode/nats.conf")" "include ./switchboard/switchboard.conf" "$mode: nats.conf includes the operator's file"
  if out=$(cd "$work/nats-$mode" && POD_NAME=nats-0 "$nats_server" -t -c "$work/nats-$mode/nats.conf" 2>&1); then
    pass "$mode: nats-server $NATS_SERVER_VERSION -t accepts nats.conf (3 routed replicas) with the include"
  else
    fail "$mode: nats-server -t: $out"$'\n'"$(cat "$work/nats-$mode/nats.conf")"
  fi
done

# --- every rendered object is valid for the API server (incl. the NatsServer CR)
if out=$(kubectl apply --dry-run=server -n "$ns" -f "$work/all.yaml" 2>&1); then
  pass "rendered chart passes server-side dry-run"
else
  fail "server-side dry-run: $out"
fi
"$HELM" template "$release" "$chart" -n "$ns" "${kv[@]}" "${callout[@]}" >"$work/callout.yaml"
if out=$(kubectl apply --dry-run=server -n "$ns" -f "$work/callout.yaml" 2>&1); then
  pass "rendered chart in AuthCallout mode passes server-side dry-run"
else
  fail "server-side dry-run (AuthCallout): $out"
fi

# --- install
"$HELM" install "$release" "$chart" -n "$ns" --set nats.enabled=true >"$work/install.log" 2>&1 ||
  fail "helm install: $(cat "$work/install.log")"
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
  "$op|yes|watch secrets --all-namespaces" "$op|no|update secrets -n team-x" \
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

# --- watchNamespaces set, installed: the operator's ServiceAccount holds
# Secrets and Events in the two watched namespaces and nowhere else (the
# release namespace is not watched), and the operator binary, run with a
# token of that ServiceAccount and the chart's flags, serves them. No
# webhook: nothing would answer it here.
new_namespace w1
new_namespace w2
release2="${release}w"
fn2="$release2-switchboard"
"$HELM" install "$release2" "$chart" -n "$ns" --set webhook.enabled=false --set "operator.watchNamespaces={$w1,$w2}" \
  --set authorizer.enabled=true \
  >"$work/install2.log" 2>&1 && pass "helm install with watchNamespaces={$w1,$w2}" ||
  fail "helm install with watchNamespaces: $(cat "$work/install2.log")"
op2="system:serviceaccount:$ns:$fn2-operator"
checks=()
for w in "$w1" "$w2"; do
  for verb in get list watch create patch delete; do checks+=("yes|$verb secrets -n $w"); done
  checks+=("yes|create events -n $w" "yes|patch events -n $w" "no|update secrets -n $w")
done
for o in "$ns" kube-system default team-x; do
  for verb in get list watch create update patch delete; do checks+=("no|$verb secrets -n $o"); done
  checks+=("no|create events -n $o")
done
for check in "${checks[@]}" "no|list secrets --all-namespaces" "no|watch secrets --all-namespaces" \
  "no|create events --all-namespaces" "yes|watch natsservers.pubsub.switchboard.dev --all-namespaces" \
  "yes|update leases.coordination.k8s.io -n $ns" "no|update leases.coordination.k8s.io -n $w1"; do
  IFS='|' read -r want what <<<"$check"
  # shellcheck disable=SC2086
  got=$(can "$op2" $what)
  [ "$got" = "$want" ] && pass "can-i operator (watchNamespaces) $what: $want" ||
    fail "can-i operator (watchNamespaces) $what: got [$got], want $want"
done
# The authorizer, installed beside it: reads Secrets in the watched
# namespaces, writes nothing anywhere.
az="system:serviceaccount:$ns:$fn2-authorizer"
checks=()
for w in "$w1" "$w2"; do
  for verb in get list watch; do checks+=("yes|$verb secrets -n $w"); done
  for verb in create update patch delete; do checks+=("no|$verb secrets -n $w"); done
  checks+=("no|create events -n $w")
done
for o in "$ns" kube-system default; do checks+=("no|get secrets -n $o" "no|list secrets -n $o"); done
for check in "${checks[@]}" "no|list secrets --all-namespaces" "no|watch secrets --all-namespaces" \
  "yes|watch natsservers.pubsub.switchboard.dev --all-namespaces" "yes|list pubsubbackends.pubsub.switchboard.dev --all-namespaces" \
  "no|update pubsubbackends.pubsub.switchboard.dev -n $w1" "no|patch natsservers.pubsub.switchboard.dev --subresource=status -n $w1" \
  "no|update leases.coordination.k8s.io -n $ns"; do
  IFS='|' read -r want what <<<"$check"
  # shellcheck disable=SC2086
  got=$(can "$az" $what)
  [ "$got" = "$want" ] && pass "can-i authorizer (watchNamespaces) $what: $want" ||
    fail "can-i authorizer (watchNamespaces) $what: got [$got], want $want"
done

exe="${SWITCHBOARD_BINARY_DIR:-/nonexistent}/bin/switchboard-operator"
if [ ! -x "$exe" ]; then
  fail "$exe is not built: the operator under the watchNamespaces RBAC not run"
else
  # A kubeconfig of the operator's ServiceAccount (TokenRequest).
  kubectl config view --raw --minify --flatten >"$work/operator.kubeconfig"
  KUBECONFIG="$work/operator.kubeconfig" kubectl config set-credentials sa \
    --token="$(kubectl -n "$ns" create token "$fn2-operator" --duration=10m)" >/dev/null
  KUBECONFIG="$work/operator.kubeconfig" kubectl config set-context --current --user=sa >/dev/null
  got=$(KUBECONFIG="$work/operator.kubeconfig" kubectl auth can-i list secrets -n "$ns" 2>/dev/null || true)
  [ "$got" = no ] && pass "the token is the operator's ServiceAccount (no Secrets in $ns)" || fail "token can-i list secrets -n $ns: [$got]"
  # The chart's flags, but no ports: nothing scrapes them here.
  mapfile -t args < <("$HELM" template "$release2" "$chart" -n "$ns" "${kv[@]}" --set "operator.watchNamespaces={$w1,$w2}" \
    --show-only templates/operator-deployment.yaml | kubectl create --dry-run=client -o json -f - |
    jq -r '.spec.template.spec.containers[0].args[] | select(startswith("--metrics-addr") or startswith("--health-addr") | not)')
  "$exe" --kubeconfig "$work/operator.kubeconfig" "${args[@]}" --metrics-addr=0 --health-addr=0 --probe-timeout=1s \
    >"$work/operator.log" 2>&1 &
  op_pid=$!
  kubectl -n "$w1" create secret generic rabbitmq-url --from-literal=url=amqps://u:p@rabbit:5671/ >/dev/null
  kubectl -n "$w1" apply -f "$SRC/crds/samples/pubsubbackend-postgres.yaml" -f "$SRC/crds/samples/pubsubbackend-rabbitmq.yaml" >/dev/null
  kubectl -n "$w2" apply -f "$SRC/crds/samples/natsserver-minimal.yaml" -f "$SRC/crds/samples/pubsubbackend-nats-minimal.yaml" >/dev/null
  ready() { [ "$(kubectl -n "$1" get "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = "$3" ]; }
  wait_until 60 ready "$w1" psb/hatchet-postgres True && pass "postgres backend in $w1 Ready (env Secret written there)" ||
    fail "postgres backend in $w1: $(kubectl -n "$w1" get psb hatchet-postgres -o jsonpath='{.status.conditions}')"
  wait_until 60 ready "$w1" psb/hatchet-rabbitmq True && pass "rabbitmq backend in $w1 Ready (user's URL Secret read)" ||
    fail "rabbitmq backend in $w1: $(kubectl -n "$w1" get psb hatchet-rabbitmq -o jsonpath='{.status.conditions}')"
  wait_until 60 ready "$w2" natssrv/local True && wait_until 30 kubectl -n "$w2" get secret local-switchboard &&
    pass "NatsServer in $w2 Ready, its config Secret written there" || fail "NatsServer in $w2: $(tail -5 "$work/operator.log")"
  # No NATS runs at its URL: the backend reports that, after its credentials.
  wait_until 60 ready "$w2" psb/hatchet-minimal False && kubectl -n "$w2" get secret hatchet-minimal-nats-credentials >/dev/null &&
    pass "NATS backend in $w2: credentials Secret written, Ready=False (no NATS)" ||
    fail "NATS backend in $w2: $(kubectl -n "$w2" get psb hatchet-minimal -o jsonpath='{.status.conditions}')"
  events() { [ -n "$(kubectl -n "$w1" get events --field-selector involvedObject.name=hatchet-postgres -o name)" ]; }
  wait_until 30 events && pass "operator recorded Events in $w1" || fail "no Event on hatchet-postgres in $w1"
  # Deleting while it runs: its finalizer removes the users and Secrets.
  kubectl -n "$w1" delete psb --all --timeout=60s >/dev/null && kubectl -n "$w2" delete psb,natssrv --all --timeout=60s >/dev/null &&
    pass "backends in the watched namespaces deleted (finalizers ran)" || fail "deleting backends under watchNamespaces hung"
  rc=0
  kill "$op_pid"
  wait "$op_pid" || rc=$?
  op_pid=
  [ "$rc" = 0 ] && pass "operator exited 0 on SIGTERM" || fail "operator exit code $rc: $(tail -5 "$work/operator.log")"
  if grep -qEi "forbidden|PermissionDenied" "$work/operator.log"; then
    fail "the operator made a forbidden call: $(grep -Ei "forbidden|PermissionDenied" "$work/operator.log" | head -3)"
  else
    pass "the operator made no forbidden call under watchNamespaces"
  fi
fi
"$HELM" uninstall "$release2" -n "$ns" --wait >/dev/null && pass "uninstall of the watchNamespaces release" || fail "uninstall $release2"
for w in "$w1" "$w2"; do
  for role in "$fn2-operator" "$fn2-authorizer"; do
    kubectl -n "$w" get role "$role" >/dev/null 2>&1 && fail "Role $role left in $w" || pass "uninstall removed the Role $role in $w"
  done
done

finish
