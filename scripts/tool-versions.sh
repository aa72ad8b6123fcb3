# Pinned versions of the test tooling built from Go modules.
# kube-apiserver 1.34 is built and tested against etcd 3.6.
KUBE_VERSION=1.34.4
ETCD_VERSION=3.6.16
HELM_VERSION=3.19.5
# nats-server with auth callout (2.10+; allowed_accounts 2.11+): the
# natsauth and callout tests' nats-server-callout and the test node's NATS
# image (scripts/images.sh); the chart's nats.image.tag names the same
# release (e2e_chart checks it).
NATS_SERVER_VERSION=2.15.3
# prometheus-nats-exporter, as the official NATS chart runs it beside each
# server: the nats_* names of the chart's NATS dashboard, scraped by
# tests/observability's real-Prometheus e2e. Built from its Go module (the
# proxy serves this exact version but lists none: name it exactly).
PROMETHEUS_NATS_EXPORTER_VERSION=0.20.1
# Only for bench/rules/run.sh (switchboard validate beside kubeconform).
KUBECONFORM_VERSION=0.6.7
