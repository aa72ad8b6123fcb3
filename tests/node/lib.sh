# Shared helpers for the node tests (sourced): the e2e helpers plus the
# node's environment, the images and a helm install of the chart with the
# images overridden to the local ones (and nothing else special).
: "${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
eval "$(bash "$SWITCHBOARD_SOURCE_DIR/scripts/node.sh" env)"
# shellcheck source=../e2e/lib.sh
. "$SWITCHBOARD_SOURCE_DIR/tests/e2e/lib.sh"

HELM="${SWITCHBOARD_TOOLS_DIR:-$SRC/.cache/tools}/bin/helm"
CHART="$SRC/charts/switchboard"
WORK=$(mktemp -d)
RELEASES=()

# node_namespace -> sets NS to a new namespace of this test
node_namespace() { new_namespace NS node; }

# apply_backend NS NAME SERVER [MAX_CONNECTIONS] -> a nats PubSubBackend
# NAME bound to the NatsServer SERVER, prefix hatchet.NAME, env Secret
# NAME-pubsub-env; with MAX_CONNECTIONS, spec.nats.limits.maxConnections
apply_backend() {
  local limits=""
  [ -n "${4:-}" ] && limits="limits: {maxConnections: $4}"
  kubectl -n "$1" apply -f - >/dev/null <<YAML
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: $2}
spec:
  kind: nats
  nats:
    serverRef: {name: $3}
    subjectPrefix: hatchet.$2
    $limits
  output: {secretName: $2-pubsub-env}
YAML
}

# teardown: as a user would, backends first while the operator still runs
# its finalizer, then the releases, then the namespaces. A finalizer still
# stuck after that is reported and removed so the namespace can go.
teardown() {
  local ns r
  for ns in "${TEST_NAMESPACES[@]}"; do
    kubectl -n "$ns" delete pubsubbackends.pubsub.switchboard.dev --all --timeout=60s >/dev/null 2>&1 || true
  done
  for r in "${RELEASES[@]}"; do
    "$HELM" uninstall "${r#*/}" -n "${r%%/*}" --wait --timeout 2m >/dev/null 2>&1 || true
  done
  for ns in "${TEST_NAMESPACES[@]}"; do
    local o
    for o in $(kubectl -n "$ns" get pubsubbackends.pubsub.switchboard.dev,natsservers.pubsub.switchboard.dev -o name 2>/dev/null); do
      echo "teardown: $ns/$o still there; removing its finalizers" >&2
      kubectl -n "$ns" patch "$o" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
    done
    kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
}
trap teardown EXIT

# install RELEASE NS ARGS... -> helm install --wait with the local images;
# the release is uninstalled by the teardown unless the test did it.
install() {
  local release=$1 ns=$2
  shift 2
  RELEASES+=("$ns/$release")
  # shellcheck disable=SC2046
  "$HELM" install "$release" "$CHART" -n "$ns" $(image_values) "$@" --wait --timeout 5m
}

# expect_installed RELEASE NS WHAT ARGS... -> install, then every pod of the
# release Running and Ready (within 180 s); each a pass or a fail (with the
# namespace dumped)
expect_installed() {
  local release=$1 ns=$2 what=$3
  shift 3
  if install "$release" "$ns" "$@" >"$WORK/install-$release.log" 2>&1; then
    pass "helm install --wait$what"
  else
    fail "helm install --wait: $(cat "$WORK/install-$release.log")"
    dump "$ns"
  fi
  if wait_until 180 pods_ready "$ns" "$release"; then
    pass "every pod Running and Ready"
  else
    fail "pods not Ready"
    dump "$ns"
  fi
}

# image_values -> --set flags pointing the chart at the locally built images
image_values() {
  echo --set "image.repository=${SWITCHBOARD_IMAGE_SWITCHBOARD%:*}" --set "image.tag=${SWITCHBOARD_IMAGE_SWITCHBOARD##*:}" \
    --set "nats.image.repository=${SWITCHBOARD_IMAGE_NATS%:*}" --set "nats.image.tag=${SWITCHBOARD_IMAGE_NATS##*:}" \
    --set "nats.reloader.repository=${SWITCHBOARD_IMAGE_RELOADER%:*}" --set "nats.reloader.tag=${SWITCHBOARD_IMAGE_RELOADER##*:}"
}

# dump NS -> what a person debugging a failed pod looks at first
dump() {
  local ns=$1
  echo "---- pods in $ns" >&2
  kubectl -n "$ns" get pods -o wide >&2 || true
  kubectl -n "$ns" get events --sort-by=.lastTimestamp 2>/dev/null | tail -n 30 >&2 || true
  local p
  for p in $(kubectl -n "$ns" get pods -o name 2>/dev/null); do
    echo "---- logs $p" >&2
    kubectl -n "$ns" logs "$p" --all-containers --tail=30 >&2 || true
  done
  kubectl -n "$ns" get psb,natssrv -o yaml 2>/dev/null | grep -A30 '^  status:' | head -80 >&2 || true
}

# pods_ready NS RELEASE -> every pod of the release is Running with all
# containers ready
pods_ready() {
  local out
  out=$(kubectl -n "$1" get pods -l "app.kubernetes.io/instance=$2" -o jsonpath='{range .items[*]}{.status.phase}{" "}{range .status.containerStatuses[*]}{.ready}{" "}{end}{"\n"}{end}')
  [ -n "$out" ] && ! grep -qvE '^Running( true)+ *$' <<<"$out"
}

# backend_ready NS NAME
backend_ready() {
  [ "$(kubectl -n "$1" get psb "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# engine_pod NS NAME SECRET SCRIPT -> a pod standing in for the Hatchet
# engine: the project image, envFrom the env Secret exactly as the README
# shows for hatchet-charts, running SCRIPT with /bin/sh; waits until it
# finished and prints its log. Returns 0 when it Succeeded.
engine_pod() {
  local ns=$1 name=$2 secret=$3 script=$4 phase i
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
spec:
  restartPolicy: Never
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
  containers:
    - name: engine
      image: $SWITCHBOARD_IMAGE_SWITCHBOARD
      imagePullPolicy: Never
      command: [/bin/sh, -c, $(jq -Rs . <<<"$script")]
      envFrom:
        - secretRef: {name: $secret}
      securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
YAML
  for ((i = 0; i < 1200; i++)); do
    phase=$(kubectl -n "$ns" get pod "$name" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    [ "$phase" = Succeeded ] || [ "$phase" = Failed ] && break
    sleep 0.1
  done
  kubectl -n "$ns" logs "$name" 2>&1 || true
  [ "$phase" = Succeeded ]
}

# expect_isolated NS POD SECRET VICTIM -> a pod with SECRET's credentials
# (another installation's) tries VICTIM's subjects (prefix hatchet.VICTIM)
# both ways: the server refuses both (NATS reports permission violations
# asynchronously: the subscriber gets nothing, the publish is dropped and
# the client is told so).
expect_isolated() {
  local ns=$1 pod=$2 secret=$3 victim=$4 out
  local intrude='switchboard pubsub probe || exit 10
export SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX=hatchet.'"$victim"'
if switchboard pubsub sub --topic roundtrip --count 1 --timeout 5s; then echo "INTRUDER READ '"$victim"'"; exit 11; fi
echo "sub on '"$victim"' got nothing"
switchboard pubsub pub --topic roundtrip "intruder"
echo "pub exit code $?"'
  if out=$(engine_pod "$ns" "$pod" "$secret" "$intrude"); then
    pass "$pod ran with $secret"
  else
    fail "$pod with $secret: $out"
  fi
  expect_contains "$out" "sub on $victim got nothing" "$secret's subscription on $victim's subjects receives nothing"
  expect_contains "$out" "Permissions Violation for Subscription to \\\"hatchet.$victim.roundtrip\\\"" "NATS refuses $secret's subscription to $victim's subjects"
  expect_contains "$out" "Permissions Violation for Publish to \\\"hatchet.$victim.roundtrip\\\"" "NATS refuses $secret's publish to $victim's subjects"
}

# nats_cluster NS RELEASE -> NATS_IPS: the release's NATS pods' IPs, each
# checked (from the node, /routez) to be routed to both others; LOADED: each
# one's /varz config_load_time, for expect_no_reload
declare -a NATS_IPS=()
declare -A LOADED=()
nats_cluster() {
  local ip
  mapfile -t NATS_IPS < <(kubectl -n "$1" get pods -l "app.kubernetes.io/instance=$2,app.kubernetes.io/component=nats" \
    -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}')
  [ "${#NATS_IPS[@]}" = 3 ] || fail "NATS pod IPs: ${NATS_IPS[*]}"
  for ip in "${NATS_IPS[@]}"; do
    wait_until 60 routed_to_both "$ip" && pass "NATS $ip routes to both other servers" ||
      fail "NATS $ip routez: $(curl -s "http://$ip:8222/routez" | head -c 300)"
    LOADED[$ip]=$(curl -sf "http://$ip:8222/varz" | jq -r .config_load_time)
  done
}
routed_to_both() { [ "$(curl -sf "http://$1:8222/routez" | jq '[.routes[].remote_name] | unique | length')" = 2 ]; }

# expect_no_reload -> no NATS pod of nats_cluster's reloaded since
expect_no_reload() {
  local ip now
  for ip in "${NATS_IPS[@]}"; do
    now=$(curl -sf "http://$ip:8222/varz" | jq -r .config_load_time)
    [ -n "$now" ] && [ "$now" = "${LOADED[$ip]}" ] && pass "NATS $ip never reloaded (config_load_time $now)" ||
      fail "NATS $ip config_load_time moved: ${LOADED[$ip]} -> $now"
  done
}

# roundtrip_script FROM TO -> an engine_pod script: probe, a subscriber on
# NATS server FROM, and publishes from TO until the subscriber got one (the
# publish repeats until the subscription has crossed the route); prints
# "received: <payload>"
roundtrip_script() {
  cat <<SCRIPT
set -e
switchboard pubsub probe
SERVER_MSGQUEUE_PUBSUB_NATS_URL=nats://$1:4222 switchboard pubsub sub --topic roundtrip --count 1 --timeout 60s >/dev/shm/got 2>/dev/shm/sub.err &
sub=\$!
i=0
until grep -q "subscribed to" /dev/shm/sub.err; do i=\$((i+1)); [ \$i -lt 300 ] || exit 3; sleep 0.1; done
i=0
while kill -0 \$sub 2>/dev/null; do
  SERVER_MSGQUEUE_PUBSUB_NATS_URL=nats://$2:4222 switchboard pubsub pub --topic roundtrip "hello across the cluster" || true
  i=\$((i+1)); [ \$i -lt 100 ] || exit 4; sleep 0.2
done
wait \$sub
echo "received: \$(cat /dev/shm/got)"
SCRIPT
}

# expect_roundtrip NS POD SECRET WHAT -> an engine pod with SECRET's
# credentials (roundtrip_script): a subscriber on the first NATS server of
# nats_cluster's, a publisher on the last; a pass naming WHAT, or a fail
# (with the namespace dumped); then the payload must have arrived
expect_roundtrip() {
  local ns=$1 pod=$2 secret=$3 what=$4 out
  if out=$(engine_pod "$ns" "$pod" "$secret" "$(roundtrip_script "${NATS_IPS[0]}" "${NATS_IPS[2]}")"); then
    pass "$what"
  else
    fail "$pod ($secret): $out"
    dump "$ns"
  fi
  expect_contains "$out" "$(printf '%s' 'hello across the cluster' | base64)" "the round trip carried the payload"
}
