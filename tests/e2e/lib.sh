# Shared helpers for the shell e2e tests (sourced, not run). Each test gets
# its own namespace, removed on exit, and fails with a message that says
# what was expected and what came back.
set -euo pipefail

: "${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
: "${SWITCHBOARD_KUBECONFIG:?run through ctest with the cluster fixture}"
export KUBECONFIG="$SWITCHBOARD_KUBECONFIG"
SRC="$SWITCHBOARD_SOURCE_DIR"
TEST_NAME=$(basename "$0" .sh)
FAILURES=0

fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }

# expect_contains HAYSTACK NEEDLE WHAT
expect_contains() {
  if grep -qF -- "$2" <<<"$1"; then
    pass "$3"
  else
    fail "$3: expected to find [$2] in:"$'\n'"$1"
  fi
}

# wait_until SECONDS COMMAND... -> polls every 100 ms until COMMAND succeeds.
wait_until() {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 10; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# new_namespace VAR [PREFIX] -> creates a fresh namespace for this test,
# stores its name in VAR and registers it for cleanup. It assigns rather than
# prints: `ns=$(new_namespace)` would run in a subshell and the registration
# would be lost with it. The cleanup deletes the objects inside first, so it
# also leaves nothing behind on a cluster run without kube-controller-manager
# (CLUSTER_CONTROLLER_MANAGER=0), where a deleted namespace stays
# Terminating.
TEST_NAMESPACES=()
new_namespace() {
  local name
  name="${2:-e2e}-${TEST_NAME//_/-}-$RANDOM"
  name=${name:0:63}
  kubectl create namespace "$name" >/dev/null
  TEST_NAMESPACES+=("$name")
  printf -v "$1" '%s' "$name"
}

cleanup_namespaces() {
  local ns
  for ns in "${TEST_NAMESPACES[@]}"; do
    kubectl -n "$ns" delete pubsubbackends.pubsub.switchboard.dev,natsservers.pubsub.switchboard.dev --all \
      --wait=false >/dev/null 2>&1 || true
    kubectl -n "$ns" delete secrets,serviceaccounts,roles,rolebindings,configmaps --all \
      --wait=false >/dev/null 2>&1 || true
    kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  done
}

finish() {
  if [ "$FAILURES" -gt 0 ]; then
    echo "$TEST_NAME: $FAILURES failure(s)" >&2
    exit 1
  fi
  echo "$TEST_NAME: all passed"
}

trap cleanup_namespaces EXIT
