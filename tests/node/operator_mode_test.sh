#!/usr/bin/env bash
# The chart in AuthCallout mode with an account per installation (NATS
# operator mode) on a real node: `helm install --set nats.enabled=true,
# nats.replicas=3,nats.provisioning.mode=AuthCallout,nats.isolation=Accounts`.
# Three routed NATS pods start on the operator's static operator-mode config
# with a full resolver on an emptyDir; the operator pushes one account per
# installation. A backend with maxConnections 1 becomes Ready; an engine-like
# pod, envFrom its env Secret, round-trips across two NATS servers; while it
# holds its one connection a second one of the same installation is refused
# with NATS's account limit error; after the limit is raised the second one
# connects, and no NATS server ever reloaded its configuration; a second
# installation is denied the first one's subjects.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

node_namespace
ns=$NS
release=sbo
fn="$release-switchboard"
nats="$fn-nats"

expect_installed "$release" "$ns" " in AuthCallout mode with isolation: Accounts" --set nats.enabled=true \
  --set nats.replicas=3 --set nats.provisioning.mode=AuthCallout --set nats.isolation=Accounts
count() { kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$release,app.kubernetes.io/component=$1" --no-headers 2>/dev/null | wc -l; }
for want in nats=3 authorizer=2; do
  n=$(count "${want%=*}")
  [ "$n" = "${want#*=}" ] && pass "${want#*=} ${want%=*} pod(s)" || fail "${want%=*} pods: $n, want ${want#*=}"
done

# --- the static operator-mode config: operator JWT, full resolver, sentinel
conf=$(kubectl -n "$ns" get secret "$nats-switchboard" -o jsonpath='{.data.switchboard\.conf}' | base64 -d)
expect_contains "$conf" "operator:" "the config Secret holds the operator JWT"
expect_contains "$conf" "type: full" "the config Secret configures a full account resolver"
expect_contains "$conf" "default_sentinel" "username/password clients go to the callout (default_sentinel)"
condition() { kubectl -n "$ns" get natssrv "$nats" -o jsonpath="{.status.conditions[?(@.type==\"$1\")].$2}"; }
wait_until 120 bash -c "[ \"\$(kubectl -n $ns get natssrv $nats -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = CalloutConfigured ]" &&
  pass "NatsServer Ready: CalloutConfigured" || fail "NatsServer Ready [$(condition Ready reason)]: $(condition Ready message)"

nats_cluster "$ns" "$release"

# --- team-a with room for one connection, team-b without a limit
apply_backend "$ns" team-a "$nats" 1
apply_backend "$ns" team-b "$nats"
for b in team-a team-b; do
  if wait_until 90 backend_ready "$ns" "$b"; then
    pass "PubSubBackend $b Ready (probe through the authorizer, into its account)"
  else
    fail "$b not Ready"
    dump "$ns"
  fi
done
accounts() { [ "$(kubectl -n "$ns" get natssrv "$nats" -o jsonpath='{.status.operatorMode.accounts}')" = 2 ]; }
wait_until 60 accounts && pass "NatsServer status: 2 installation accounts" ||
  fail "status.operatorMode: $(kubectl -n "$ns" get natssrv "$nats" -o jsonpath='{.status.operatorMode}')"

# --- an engine pod: a round trip between two NATS servers, then, while its
# subscriber holds the installation's one connection, a publish (a second
# connection) is refused with NATS's account limit error.
roundtrip_then_limit='set -e
SERVER_MSGQUEUE_PUBSUB_NATS_URL=nats://'"${NATS_IPS[0]}"':4222 switchboard pubsub sub --topic roundtrip --count 2 --timeout 60s >/dev/shm/got 2>/dev/shm/sub.err &
sub=$!
i=0
until grep -q "subscribed to" /dev/shm/sub.err; do i=$((i+1)); [ $i -lt 300 ] || exit 3; sleep 0.1; done
if SERVER_MSGQUEUE_PUBSUB_NATS_URL=nats://'"${NATS_IPS[2]}"':4222 switchboard pubsub pub --topic roundtrip "second connection" 2>/dev/shm/pub.err; then
  echo "SECOND CONNECTION ACCEPTED"
else
  echo "second connection refused: $(cat /dev/shm/pub.err)"
fi
kill $sub 2>/dev/null || true
wait $sub 2>/dev/null || true
echo done'
if out=$(engine_pod "$ns" engine-a1 team-a-pubsub-env "$roundtrip_then_limit"); then
  pass "engine pod team-a ran"
else
  fail "engine pod team-a failed: $out"
  dump "$ns"
fi
expect_contains "$out" "second connection refused" "team-a's second connection is refused while its first is open"
expect_contains "$out" "maximum account active connections exceeded" "the refusal is NATS's account connection limit"

# --- the limit raised to 2: the same two connections now work, and the
# publish crosses from the third NATS server to the subscriber on the first.
kubectl -n "$ns" patch psb team-a --type=merge -p '{"spec":{"nats":{"limits":{"maxConnections":2}}}}' >/dev/null
generation=$(kubectl -n "$ns" get psb team-a -o jsonpath='{.metadata.generation}')
observed() {
  [ "$(kubectl -n "$ns" get psb team-a -o jsonpath='{.status.conditions[?(@.type=="Ready")].observedGeneration}')" = "$generation" ] &&
    backend_ready "$ns" team-a
}
wait_until 90 observed && pass "team-a Ready again with maxConnections 2" || fail "team-a after the patch: $(kubectl -n "$ns" get psb team-a -o jsonpath='{.status.conditions}')"
expect_roundtrip "$ns" engine-a2 team-a-pubsub-env "with maxConnections 2, two connections of team-a round-trip between two NATS servers"

# --- the second installation is denied the first one's subjects
expect_isolated "$ns" engine-b team-b-pubsub-env team-a

# --- accounts created, a limit changed, four engines: no server reloaded
expect_no_reload

kubectl -n "$ns" delete pod engine-a1 engine-a2 engine-b --wait=false >/dev/null 2>&1 || true
kubectl -n "$ns" delete psb team-a team-b --timeout=60s >/dev/null 2>&1 && pass "backends deleted (finalizers ran)" ||
  fail "deleting backends hung"
gone() { [ "$(kubectl -n "$ns" get natssrv "$nats" -o jsonpath='{.status.operatorMode.accounts}')" = 0 ]; }
wait_until 60 gone && pass "their accounts are gone from the status" ||
  fail "status.operatorMode after the deletes: $(kubectl -n "$ns" get natssrv "$nats" -o jsonpath='{.status.operatorMode}')"
[ "$FAILURES" = 0 ] || dump "$ns"
finish
