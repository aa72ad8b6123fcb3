#!/usr/bin/env bash
# The CRDs in crds/ against a real kube-apiserver: they are Established with
# the expected names, every sample applies (and gets its defaults), every
# invalid object in testdata/invalid is rejected with the message it names,
# the status subresource and printer columns work, and `kubectl explain`
# teaches the API.
. "$(dirname "$0")/lib.sh"

new_namespace ns
invalid_dir="$(dirname "$0")/testdata/invalid"

# --- Established, names, category
for crd in pubsubbackends.pubsub.switchboard.dev natsservers.pubsub.switchboard.dev; do
  st=$(kubectl get crd "$crd" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')
  [ "$st" = True ] && pass "$crd Established" || fail "$crd Established=[$st]"
done
out=$(kubectl api-resources --api-group=pubsub.switchboard.dev -o wide)
expect_contains "$out" "psb" "short name psb"
expect_contains "$out" "natssrv" "short name natssrv"
expect_contains "$out" "switchboard" "category switchboard"

# --- every sample applies, server-side (what GitOps tools do)
for f in "$SRC"/crds/samples/*.yaml; do
  if out=$(kubectl -n "$ns" apply --server-side --field-manager=e2e -f "$f" 2>&1); then
    pass "sample $(basename "$f") applies"
  else
    fail "sample $(basename "$f") rejected: $out"
  fi
done
n=$(kubectl -n "$ns" get switchboard -o name | wc -l)
samples=$(ls "$SRC"/crds/samples/*.yaml | wc -l)
[ "$n" -eq "$samples" ] && pass "kubectl get switchboard lists all $n samples" || fail "category lists $n objects, want $samples"

# --- defaults from the schema
d=$(kubectl -n "$ns" get natssrv local -o jsonpath='{.spec.maxPayload}|{.spec.isolation}|{.spec.config.key}|{.spec.allowedNamespaces.from}')
[ "$d" = "16Mi|Permissions|switchboard.conf|Same" ] && pass "NatsServer defaults" || fail "NatsServer defaults: [$d]"
d=$(kubectl -n "$ns" get psb hatchet-minimal -o jsonpath='{.spec.nats.subjectPrefix}|{.spec.nats.credentials.rotationGracePeriod}')
[ "$d" = "hatchet.pubsub|10m" ] && pass "PubSubBackend nats defaults" || fail "PubSubBackend nats defaults: [$d]"
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: defaults-pg}
spec: {kind: postgres, postgres: {}}
---
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: defaults-rmq}
spec: {kind: rabbitmq, rabbitmq: {urlSecretRef: {name: rmq}}}
YAML
d=$(kubectl -n "$ns" get psb defaults-pg -o jsonpath='{.spec.postgres.maxConns}|{.spec.postgres.minConns}')
[ "$d" = "5|1" ] && pass "postgres defaults 5/1" || fail "postgres defaults: [$d]"
d=$(kubectl -n "$ns" get psb defaults-rmq -o jsonpath='{.spec.rabbitmq.maxPubChans}|{.spec.rabbitmq.maxSubChans}|{.spec.rabbitmq.urlSecretRef.key}')
[ "$d" = "10|20|url" ] && pass "rabbitmq defaults 10/20/url" || fail "rabbitmq defaults: [$d]"
# maxPayload is int-or-string: a plain byte count is kept as an integer.
d=$(kubectl -n "$ns" get natssrv secure -o jsonpath='{.spec.maxPayload}')
[ "$d" = 33554432 ] && pass "maxPayload as integer" || fail "maxPayload integer: [$d]"

# --- status subresource: spec writes do not touch status and vice versa
kubectl -n "$ns" patch psb hatchet --subresource=status --type=merge -p \
  '{"status":{"observedGeneration":1,"conditions":[{"type":"Ready","status":"True","reason":"Probed","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}],"envSecretName":"hatchet-pubsub-env","server":"nats/shared"}}' >/dev/null
kubectl -n "$ns" patch psb hatchet --type=merge -p '{"status":{"envSecretName":"overwritten"},"spec":{"nats":{"subjectPrefix":"hatchet.team-a2"}}}' >/dev/null
d=$(kubectl -n "$ns" get psb hatchet -o jsonpath='{.status.envSecretName}|{.metadata.generation}')
[ "$d" = "hatchet-pubsub-env|2" ] && pass "status subresource isolates status from spec writes" || fail "status/generation: [$d]"

# --- printer columns
out=$(kubectl -n "$ns" get psb hatchet)
expect_contains "$out" "READY   REASON   KIND   PREFIX            SERVER        AGE" "psb printer columns"
expect_contains "$out" "True    Probed   nats   hatchet.team-a2   nats/shared" "psb row shows Ready, Reason, Kind, Prefix, Server with its namespace"
out=$(kubectl -n "$ns" get psb hatchet -o wide)
expect_contains "$out" "hatchet-pubsub-env" "wide output adds the env Secret"
out=$(kubectl -n "$ns" get natssrv shared)
expect_contains "$out" "READY   URL" "natssrv printer columns"

# --- invalid objects: rejected with the expected messages, nothing stored
count=0
for f in "$invalid_dir"/*.yaml; do
  count=$((count + 1))
  name=$(basename "$f" .yaml)
  if out=$(kubectl -n "$ns" apply -f "$f" 2>&1); then
    fail "$name was accepted: $out"
    continue
  fi
  ok=1
  while IFS= read -r want; do
    grep -qF -- "$want" <<<"$out" || {
      ok=0
      fail "$name: expected [$want] in: $out"
    }
  done < <(sed -n 's/^# expect: //p' "$f")
  [ "$ok" = 1 ] && pass "$name rejected: $(grep -o 'Invalid value.*\|Unsupported value.*\|Required value.*\|unknown field.*\|Too long.*' <<<"$out" | head -1 | cut -c1-110)"
done
[ "$count" -ge 30 ] && pass "$count invalid objects checked" || fail "only $count invalid examples found in $invalid_dir"
n=$(kubectl -n "$ns" get switchboard -o name | wc -l)
[ "$n" -eq $((samples + 2)) ] && pass "no invalid object was stored" || fail "$n objects stored, want $((samples + 2))"

# --- kubectl explain teaches the API
out=$(kubectl explain pubsubbackend.spec)
expect_contains "$out" "Desired pub/sub for one Hatchet installation" "explain pubsubbackend.spec: description"
expect_contains "$out" "kind	<string> -required-" "explain lists kind as required"
expect_contains "$out" 'enum: nats, rabbitmq, postgres' "explain shows the kind enum"
expect_contains "$out" "SERVER_MSGQUEUE_PUBSUB_KIND" "explain kind: engine variable"
out=$(kubectl explain pubsubbackend.spec.nats.subjectPrefix)
expect_contains "$out" "Default hatchet.pubsub" "explain subjectPrefix: default"
out=$(kubectl explain natsserver.spec.maxPayload)
expect_contains "$out" "NATS's hard limit is 64Mi" "explain maxPayload"

# Every property in both schemas carries a description (metadata excepted:
# the API server forbids one there).
for crd in pubsubbackends.pubsub.switchboard.dev natsservers.pubsub.switchboard.dev; do
  missing=$(kubectl get crd "$crd" -o json | jq -r '
    .spec.versions[0].schema.openAPIV3Schema as $s
    | [$s | paths(objects) | select(length >= 2 and .[-2] == "properties" and .[-1] != "metadata")]
    | map(. as $p | select(($s | getpath($p) | .description) == null) | map(tostring) | join(".")) | .[]')
  [ -z "$missing" ] && pass "$crd: every field has a description" || fail "$crd: fields without description: $missing"
done

finish
