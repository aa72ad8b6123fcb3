# Pinned versions of the test tooling built from Go modules.
# kube-apiserver 1.34 is built and tested against etcd 3.6.
KUBE_VERSION=1.34.4
ETCD_VERSION=3.6.16
HELM_VERSION=3.19.5
# Only for bench/rules/run.sh (switchboard validate beside kubeconform).
KUBECONFORM_VERSION=0.6.7
