#!/usr/bin/env bash
# The cluster fixture is a real API server: admin access works, RBAC denies
# a service-account token without permissions, and data survive an API
# server restart on the same port (what watch-resume tests rely on).
. "$(dirname "$0")/lib.sh"

ns=$(new_namespace)

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

finish
