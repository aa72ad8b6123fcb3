#!/usr/bin/env bash
# The cluster fixture is a real API server: admin access works, RBAC denies
# a service-account token without permissions, data survive an API server
# restart on the same port (what watch-resume tests rely on), and the
# controller manager finalizes namespaces and collects garbage.
. "$(dirname "$0")/lib.sh"

new_namespace ns

out=$(kubectl auth can-i '*' '*' --all-namespaces 2>&1 || true)
expect_contains "$out" yes "admin kubeconfig is cluster-admin"

kubectl -n "$ns" create serviceaccount bare >/dev/null
token=$(kubectl -n "$ns" create token bare --duration=10m)
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
ca="$SWITCHBOARD_CLUSTER_DIR/pki/ca.crt"
out=$(curl -s --cacert "$ca" -H "Authorization: Bearer $token" "$server/api/v1/namespaces/$ns/secrets")
expect_contains "$out" '"reason": "Forbidden"' "service-account token without RBAC gets Forbidden"
expect_contains "$out" "system:serviceaccount:$ns:bare" "Forbidden names the service account"

kubectl -n "$ns" create role read-secrets --verb=list --resource=secrets >/dev/null
kubectl -n "$ns" create rolebinding bare-read --role=read-secrets --serviceaccount="$ns:bare" >/dev/null
out=$(curl -s --cacert "$ca" -H "Authorization: Bearer $token" "$server/api/v1/namespaces/$ns/secrets")
expect_contains "$out" '"kind": "SecretList"' "RBAC grant takes effect for the token"

kubectl -n "$ns" create secret generic survivor --from-literal=k=v >/dev/null
port_before=${server##*:}
CLUSTER_DIR="$SWITCHBOARD_CLUSTER_DIR" bash "$SRC/scripts/cluster.sh" restart-apiserver
server_after=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
[ "${server_after##*:}" = "$port_before" ] && pass "restart keeps the port" || fail "port changed: $server -> $server_after"
out=$(kubectl -n "$ns" get secret survivor -o jsonpath='{.data.k}')
[ "$out" = "$(printf v | base64)" ] && pass "data survive an API server restart" || fail "secret after restart: [$out]"

# --- the controllers the cluster runs (unless CLUSTER_CONTROLLER_MANAGER=0)
if [ -f "$SWITCHBOARD_CLUSTER_DIR/run/kube-controller-manager.pid" ]; then
  wait_until 30 kubectl -n "$ns" get serviceaccount default && pass "new namespaces get a default ServiceAccount" ||
    fail "no default ServiceAccount in $ns"

  uid=$(kubectl -n "$ns" create configmap owner -o jsonpath='{.metadata.uid}')
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: owned
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "$uid"}]
stringData: {k: v}
YAML
  kubectl -n "$ns" delete configmap owner >/dev/null
  gone() { ! kubectl "$@" >/dev/null 2>&1; }
  wait_until 60 gone -n "$ns" get secret owned && pass "garbage collector deletes owned objects" ||
    fail "owned Secret survived its owner"

  doomed="$ns-doomed"
  kubectl create namespace "$doomed" >/dev/null
  kubectl -n "$doomed" create secret generic s --from-literal=k=v >/dev/null
  kubectl delete namespace "$doomed" --wait=false >/dev/null
  wait_until 60 gone get namespace "$doomed" && pass "a deleted namespace is finalized" ||
    fail "namespace $doomed still $(kubectl get ns "$doomed" -o jsonpath='{.status.phase}')"
else
  echo "skip: kube-controller-manager not running (CLUSTER_CONTROLLER_MANAGER=0)"
fi

finish
