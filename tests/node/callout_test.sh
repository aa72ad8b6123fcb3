#!/usr/bin/env bash
# The chart in AuthCallout mode on a real node: `helm install
# --set nats.enabled=true,nats.replicas=3,nats.provisioning.mode=AuthCallout`.
# Three routed NATS pods without a reloader start on the operator's static
# callout file; two authorizer pods (PodDisruptionBudget) become ready; the
# NatsServer says CalloutConfigured and AuthorizerAvailable; a backend
# becomes Ready; an engine-like pod, envFrom its env Secret, probes and
# round-trips across two NATS servers; a second installation is denied the
# first one's subjects; with one authorizer pod deleted, a new engine still
# connects; and no NATS server ever reloaded its configuration.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

node_namespace
ns=$NS
release=sbc
fn="$release-switchboard"
nats="$fn-nats"

# --- 1 operator, 2 webhook, 3 NATS, 2 authorizer pods, all Ready
expect_installed "$release" "$ns" " in AuthCallout mode" --set nats.enabled=true --set nats.replicas=3 \
  --set nats.provisioning.mode=AuthCallout
count() { kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$release,app.kubernetes.io/component=$1" --no-headers 2>/dev/null | wc -l; }
for want in operator=1 webhook=2 nats=3 authorizer=2; do
  n=$(count "${want%=*}")
  [ "$n" = "${want#*=}" ] && pass "${want#*=} ${want%=*} pod(s)" || fail "${want%=*} pods: $n, want ${want#*=}"
done
got=$(kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$release,app.kubernetes.io/component=nats" \
  -o jsonpath='{range .items[*]}{range .spec.containers[*]}{.name}{" "}{end}{end}')
[ "$got" = "nats nats nats " ] && pass "NATS pods run no reloader" || fail "NATS containers [$got]"
kubectl -n "$ns" get pdb "$fn-authorizer" >/dev/null 2>&1 && pass "authorizer PodDisruptionBudget" || fail "no PDB $fn-authorizer"

# --- the operator wrote the static callout file and the keys; NATS runs it
conf=$(kubectl -n "$ns" get secret "$nats-switchboard" -o jsonpath='{.data.switchboard\.conf}' | base64 -d)
expect_contains "$conf" "auth_callout" "the config Secret holds the static callout file"
expect_contains "$conf" "allowed_accounts" "the static file keeps SYS and SWITCHBOARD_AUTH out of the callout"
kubectl -n "$ns" get secret "$nats-auth-callout" >/dev/null 2>&1 && pass "callout Secret $nats-auth-callout written" ||
  fail "no callout Secret $nats-auth-callout"
condition() { kubectl -n "$ns" get natssrv "$nats" -o jsonpath="{.status.conditions[?(@.type==\"$1\")].$2}"; }
wait_until 120 bash -c "[ \"\$(kubectl -n $ns get natssrv $nats -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = CalloutConfigured ]" &&
  pass "NatsServer Ready: CalloutConfigured" || fail "NatsServer Ready [$(condition Ready reason)]: $(condition Ready message)"
wait_until 120 bash -c "[ \"\$(kubectl -n $ns get natssrv $nats -o jsonpath='{.status.conditions[?(@.type==\"AuthorizerAvailable\")].status}')\" = True ]" &&
  pass "NatsServer AuthorizerAvailable True" ||
  fail "AuthorizerAvailable [$(condition AuthorizerAvailable status)]: $(condition AuthorizerAvailable message)"

# Each NATS pod, from the node: routed to the two others, and its config
# load time (compared at the end: nothing may reload it).
nats_cluster "$ns" "$release"

# --- a backend connects through the callout at once
apply_backend "$ns" team-a "$nats"
if wait_until 60 backend_ready "$ns" team-a; then
  pass "PubSubBackend team-a Ready (probe through the authorizer)"
else
  fail "team-a not Ready"
  dump "$ns"
fi

# --- an engine-like pod, envFrom the env Secret: probe, then a round trip
# from a subscriber on the first NATS server to a publisher on the last one.
expect_roundtrip "$ns" engine-a team-a-pubsub-env "engine pod: probe and a round trip between two NATS servers succeed"

# --- a second installation is denied the first one's subjects
apply_backend "$ns" team-b "$nats"
wait_until 60 backend_ready "$ns" team-b && pass "PubSubBackend team-b Ready" || fail "team-b not Ready"
expect_isolated "$ns" engine-b team-b-pubsub-env team-a

# --- one authorizer gone: the other answers, a new engine connects
victim=$(kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$release,app.kubernetes.io/component=authorizer" -o jsonpath='{.items[0].metadata.name}')
kubectl -n "$ns" delete pod "$victim" --wait=true --timeout=60s >/dev/null && pass "authorizer pod $victim deleted" || fail "deleting $victim"
if out=$(engine_pod "$ns" engine-c team-a-pubsub-env 'switchboard pubsub probe'); then
  pass "with one authorizer pod deleted, a new engine still connects"
else
  fail "engine after deleting an authorizer: $out"
fi
wait_until 120 pods_ready "$ns" "$release" && [ "$(count authorizer)" = 2 ] && pass "the Deployment is back to 2 ready authorizers" ||
  fail "authorizers after the deletion: $(count authorizer)"

# --- no NATS server reloaded: two installations, their probes, three engines
expect_no_reload

kubectl -n "$ns" delete pod engine-a engine-b engine-c --wait=false >/dev/null 2>&1 || true
kubectl -n "$ns" delete psb team-a team-b --timeout=60s >/dev/null 2>&1 && pass "backends deleted (finalizers ran)" ||
  fail "deleting backends hung"
[ "$FAILURES" = 0 ] || dump "$ns"
finish
