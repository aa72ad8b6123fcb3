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
d=$(kubectl -n "$ns" get natssrv local -o jsonpath='{.spec.maxPayload}|{.spec.isolation}|{.spec.config.key}|{.spec.allowedNamespaces.from}|{.spec.provisioning.mode}')
[ "$d" = "16Mi|Permissions|switchboard.conf|Same|IncludeFile" ] && pass "NatsServer defaults" || fail "NatsServer defaults: [$d]"
# authCallout is never added by a default (it is refused with IncludeFile);
# inside a written block the account defaults to HATCHET.
d=$(kubectl -n "$ns" get natssrv local -o jsonpath='{.spec.provisioning.authCallout}')
[ -z "$d" ] && pass "no authCallout block by default" || fail "defaulted authCallout: [$d]"
d=$(kubectl -n "$ns" patch natssrv callout --type=json -o jsonpath='{.spec.provisioning.authCallout.account}' \
  -p '[{"op":"replace","path":"/spec/provisioning/authCallout","value":{}}]')
[ "$d" = HATCHET ] && pass "authCallout.account defaults to HATCHET" || fail "authCallout.account default: [$d]"
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
expect_contains "$out" "READY   REASON   KIND   PREFIX            SERVER        CONNECTIONS   AGE" "psb printer columns"
expect_contains "$out" "True    Probed   nats   hatchet.team-a2   nats/shared" "psb row shows Ready, Reason, Kind, Prefix, Server with its namespace"
out=$(kubectl -n "$ns" get psb hatchet -o wide)
expect_contains "$out" "hatchet-pubsub-env" "wide output adds the env Secret"
out=$(kubectl -n "$ns" get natssrv shared)
expect_contains "$out" "READY   URL" "natssrv printer columns"
out=$(kubectl -n "$ns" get natssrv callout)
expect_contains "$out" "PROVISIONING" "natssrv printer column Provisioning"
expect_contains "$out" "AuthCallout" "natssrv row shows the provisioning mode"
# status.authCallout survives the schema (an unknown status field would be pruned).
kubectl -n "$ns" patch natssrv callout --subresource=status --type=merge -p \
  '{"status":{"authCallout":{"issuer":"ABJHLOVMPA4CI6R5KLNGOB4GSLNIY7IOUPAJC4YFNDLQVIOBYQGUWVLA","account":"HATCHET","authorizers":3,"servers":3},"conditions":[{"type":"Ready","status":"True","reason":"CalloutConfigured","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"AuthorizerAvailable","status":"True","reason":"AuthorizersSubscribed","message":"3 of 3","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' >/dev/null
d=$(kubectl -n "$ns" get natssrv callout -o jsonpath='{.status.authCallout.account}|{.status.authCallout.authorizers}|{.status.authCallout.servers}|{.status.conditions[?(@.type=="AuthorizerAvailable")].reason}')
[ "$d" = "HATCHET|3|3|AuthorizersSubscribed" ] && pass "status.authCallout and AuthorizerAvailable stored" || fail "status.authCallout: [$d]"

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
out=$(kubectl explain natsservers.spec.provisioning)
expect_contains "$out" "How Hatchet installations' users reach NATS" "explain provisioning: description"
expect_contains "$out" "mode	<string>" "explain provisioning lists mode"
expect_contains "$out" "authCallout	<Object>" "explain provisioning lists authCallout"
expect_contains "$out" "enum: IncludeFile, AuthCallout" "explain provisioning: the mode enum"
out=$(kubectl explain natsservers.spec.provisioning.authCallout)
expect_contains "$out" "account	<string>" "explain authCallout lists account"
expect_contains "$out" "secretName	<string>" "explain authCallout lists secretName"
out=$(kubectl explain natsservers.spec.provisioning.authCallout.account)
expect_contains "$out" "Default HATCHET" "explain account: default"
out=$(kubectl explain natsservers.status.authCallout)
expect_contains "$out" "issuer	<string>" "explain status.authCallout lists issuer"

# --- AuthCallout against the API server's CEL (the invalid files cover
# CREATE; these are UPDATEs of stored objects and the name boundary).
# AuthCallout with isolation: Accounts is NATS operator mode: admitted.
if out=$(kubectl -n "$ns" patch natssrv callout --type=merge --dry-run=server -p '{"spec":{"isolation":"Accounts"}}' 2>&1); then
  pass "CEL admits isolation Accounts on an AuthCallout server (operator mode)"
else
  fail "an AuthCallout server was refused isolation Accounts: $out"
fi
if out=$(kubectl -n "$ns" patch natssrv callout --type=merge --dry-run=server -p '{"spec":{"provisioning":{"authCallout":{"resolverDir":"data/jwt"}}}}' 2>&1); then
  fail "a relative resolverDir was accepted: $out"
else
  expect_contains "$out" "resolverDir" "CEL refuses a relative resolverDir"
fi
if out=$(kubectl -n "$ns" patch natssrv callout --type=merge -p '{"spec":{"provisioning":{"mode":"IncludeFile"}}}' 2>&1); then
  fail "IncludeFile with an authCallout block was accepted: $out"
else
  expect_contains "$out" "authCallout is only used with mode: AuthCallout" "CEL refuses authCallout with IncludeFile"
fi
d=$(kubectl -n "$ns" get natssrv callout secure -o jsonpath='{.items[*].spec.provisioning.mode}|{.items[*].spec.isolation}')
[ "$d" = "AuthCallout IncludeFile|Permissions Accounts" ] && pass "refused updates changed nothing" || fail "after refused updates: [$d]"
# The name bound: 240 characters fit <name>-auth-callout in 253.
long=$(printf 'c%.0s' $(seq 240))
if out=$(kubectl -n "$ns" apply -f - 2>&1 <<YAML
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: NatsServer
metadata: {name: $long}
spec: {url: "nats://nats:4222", provisioning: {mode: AuthCallout}}
YAML
); then
  pass "a 240-character NatsServer name is accepted"
  kubectl -n "$ns" delete natssrv "$long" >/dev/null
else
  fail "a 240-character NatsServer name was refused: $out"
fi

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
