#!/usr/bin/env bash
# Manual, not in `make test`: docs/official-nats-chart.md's recipe for
# AuthCallout with `isolation: Accounts` (NATS operator mode) on the test
# node, with the official NATS chart. CI cannot download that chart (its
# Helm repository is outside the registries CI reaches), so this runs where
# a copy of it is at hand:
#
#   NODE_DIR=build/node SWITCHBOARD_NODE_DIR=build/node SWITCHBOARD_SOURCE_DIR=$PWD \
#     SWITCHBOARD_BINARY_DIR=$PWD/build bash scripts/node.sh up
#   NODE_DIR=... (the same) TEST_NAME=official_chart \
#     bash tests/node/manual/official_chart_operator_mode.sh PATH/TO/nats-io/k8s/helm/charts/nats
#   NODE_DIR=... bash scripts/node.sh down
#
# The NatsServer and the NATS values are the doc's own YAML blocks (read
# from the section, so the doc is what is tried), with the image pointed at
# the node's local nats image. Asserts: the operator writes the config
# Secret before NATS exists; `helm install --wait` of the official chart
# succeeds and its three pods are Ready and routed; two backends become
# Ready (probes through the authorizers into their own accounts); an engine
# pod round-trips between two NATS servers; the other installation is
# denied its subjects; no NATS server reloaded.
set -euo pipefail
official=${1:?usage: $0 PATH/TO/official/helm/charts/nats}
. "$SWITCHBOARD_SOURCE_DIR/tests/node/lib.sh"

# doc_block N -> the Nth ```yaml block of the doc's operator-mode section
doc_block() {
  awk -v want="$1" '
    /^## AuthCallout with an account per installation/ { in_section = 1; next }
    in_section && /^## / { exit }
    in_section && /^```yaml/ { n++; inblock = (n == want); next }
    in_section && /^```/ { inblock = 0; next }
    inblock { print }' "$SWITCHBOARD_SOURCE_DIR/docs/official-nats-chart.md"
}

node_namespace
expect_installed sbt "$NS" " (the operator and the authorizers)" --set authorizer.enabled=true
new_namespace NATSNS nats
nns=$NATSNS
# The doc's NatsServer, in this test's namespace (its URL names the Service there).
doc_block 1 | sed -e "s/namespace: nats}/namespace: $nns}/" -e "s/nats\.nats\.svc/nats.$nns.svc/" |
  kubectl apply -f - >/dev/null
wait_until 60 kubectl -n "$nns" get secret nats-switchboard && pass "config Secret written before NATS" ||
  fail "no config Secret nats-switchboard"
doc_block 2 >"$WORK/nats-values.yaml"
cat >"$WORK/images.yaml" <<YAML
container:
  image: {fullImageName: $SWITCHBOARD_IMAGE_NATS, pullPolicy: Never}
natsBox:
  enabled: false
YAML
RELEASES+=("$nns/nats")
if "$HELM" install nats "$official" -n "$nns" -f "$WORK/nats-values.yaml" -f "$WORK/images.yaml" \
  --wait --timeout 5m >"$WORK/nats.log" 2>&1; then
  pass "official chart $(awk '/^version:/ {print $2}' "$official/Chart.yaml") installed with the doc's values"
else
  fail "helm install of the official chart: $(cat "$WORK/nats.log")"
  dump "$nns"
fi
wait_until 180 pods_ready "$nns" nats && pass "NATS pods Ready" || {
  fail "NATS pods not Ready"
  dump "$nns"
}
nats_cluster "$nns" nats
apply_backend "$nns" team-a nats
apply_backend "$nns" team-b nats
for b in team-a team-b; do
  wait_until 120 backend_ready "$nns" "$b" && pass "$b Ready" || {
    fail "$b not Ready"
    dump "$nns"
  }
done
expect_roundtrip "$nns" engine-b team-b-pubsub-env "team-b round-trips between two NATS servers"
expect_isolated "$nns" engine-x team-b-pubsub-env team-a
expect_no_reload
# The NatsServer is not the release's: remove it while the operator runs.
kubectl -n "$nns" delete psb --all --timeout=60s >/dev/null 2>&1 || true
kubectl -n "$nns" delete natssrv nats --timeout=60s >/dev/null 2>&1 || true
finish
