#!/usr/bin/env bash
# `kubectl apply` of one PubSubBackend -> Ready on the test node, through
# the chart, with N installations already on the server: AuthCallout mode
# and IncludeFile mode one after the other in one run (side by side; in
# file mode the kubelet's volume sync of the config Secret counts).
#
#   bench/node/apply_to_ready.sh [--installations N] [--samples S] [--file-samples F] [--modes "AuthCallout IncludeFile"]
#
# Needs a node that is up (scripts/node.sh up, or `make node-up`), run from
# the build tree's environment (SWITCHBOARD_SOURCE_DIR, SWITCHBOARD_NODE_DIR
# as for the node tests). Prints one line per sample and a summary per mode.
set -euo pipefail
installations=1000
samples=20
file_samples=5
modes="AuthCallout IncludeFile"
while [ $# -gt 0 ]; do
  case $1 in
  --installations) installations=$2; shift 2 ;;
  --samples) samples=$2; shift 2 ;;
  --file-samples) file_samples=$2; shift 2 ;;
  --modes) modes=$2; shift 2 ;;
  *) echo "usage: $0 [--installations N] [--samples S] [--file-samples F] [--modes LIST]" >&2; exit 2 ;;
  esac
done
export SWITCHBOARD_SOURCE_DIR=${SWITCHBOARD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SWITCHBOARD_SOURCE_DIR/tests/node/lib.sh"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# create_many NS SERVER N: N backends in batches of 100 per kubectl apply.
create_many() {
  local ns=$1 server=$2 n=$3 i
  for ((i = 0; i < n; i++)); do
    printf -- '---\napiVersion: pubsub.switchboard.dev/v1alpha1\nkind: PubSubBackend\nmetadata: {name: i%05d}\nspec:\n  kind: nats\n  nats:\n    serverRef: {name: %s}\n    subjectPrefix: hatchet.i%05d\n' "$i" "$server" "$i"
    if (((i + 1) % 100 == 0 || i + 1 == n)); then
      printf '%s\n' '--- #end'
    fi
  done | awk -v ns="$ns" 'BEGIN { cmd = "kubectl -n " ns " apply -f - >/dev/null" }
    /^--- #end/ { close(cmd); next } { print | cmd }'
}

ready_count() {
  kubectl -n "$1" get psb -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$' || true
}

percentile() { # percentile P < values
  sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'
}

run_mode() {
  local mode=$1 count=$2 ns release=bench fn nats t0 t1 i s
  node_namespace
  ns=$NS
  fn="$release-switchboard"
  nats="$fn-nats"
  echo "== $mode: helm install (nats.replicas=3) in $ns"
  install "$release" "$ns" --set nats.enabled=true --set nats.replicas=3 \
    --set nats.provisioning.mode="$mode" >"$WORK/install-$mode.log" 2>&1 || {
    cat "$WORK/install-$mode.log"
    dump "$ns"
    return 1
  }
  wait_until 300 bash -c "kubectl -n $ns get natssrv $nats -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True"
  t0=$(now)
  create_many "$ns" "$nats" "$installations"
  t1=$(now)
  echo "$mode: $installations created in $(elapsed "$t0" "$t1") s"
  local deadline=$(($(date +%s) + 1800))
  while [ "$(ready_count "$ns")" -lt "$installations" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done
  if [ "$(ready_count "$ns")" -ge "$installations" ]; then
    echo "$mode: all $installations Ready $(elapsed "$t0" "$(now)") s after the first create"
  else
    echo "$mode: only $(ready_count "$ns") of $installations Ready after 1800 s"
  fi
  : >"$WORK/samples-$mode"
  for ((s = 0; s < count; s++)); do
    i=$(printf 'sample%03d' "$s")
    t0=$(now)
    apply_backend "$ns" "$i" "$nats"
    if kubectl -n "$ns" wait --for=condition=Ready "psb/$i" --timeout=300s >/dev/null 2>&1; then
      t1=$(now)
      echo "$mode sample $s: $(elapsed "$t0" "$t1") s"
      elapsed "$t0" "$t1" >>"$WORK/samples-$mode"
      echo >>"$WORK/samples-$mode"
    else
      echo "$mode sample $s: not Ready within 300 s"
    fi
  done
  sed -i '/^$/d' "$WORK/samples-$mode"
  echo "$mode summary: installations=$installations samples=$(wc -l <"$WORK/samples-$mode")" \
    "p50=$(percentile 50 <"$WORK/samples-$mode") s p99=$(percentile 99 <"$WORK/samples-$mode") s" \
    "max=$(sort -n "$WORK/samples-$mode" | tail -1) s load=$(cut -d' ' -f1-3 /proc/loadavg)"
  # Backends first, while the operator runs their finalizers.
  kubectl -n "$ns" delete psb --all --timeout=300s >/dev/null 2>&1 || true
  "$HELM" uninstall "$release" -n "$ns" --wait --timeout 5m >/dev/null 2>&1 || true
}

echo "apply_to_ready: $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in $modes; do
  if [ "$mode" = IncludeFile ]; then run_mode "$mode" "$file_samples"; else run_mode "$mode" "$samples"; fi
done
