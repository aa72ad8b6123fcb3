#!/usr/bin/env bash
# The chart's PrometheusRule and dashboard ConfigMaps, rendered by helm (no
# cluster): off by default; on, they hold exactly files/alerts.yaml's groups
# (less those of components the release does not run) and dashboards/*.json,
# with the labels, label value and namespaces the values ask for; the
# rendered rules pass `promtool check rules`; the ServiceMonitors give the job
# names the rules select; the schema refuses wrong values; `helm lint
# --strict` passes with everything on.
#
# helm comes from the tools cache (make tools: scripts/build-tools.sh helm),
# $SWITCHBOARD_TOOLS_DIR or <source>/.cache/tools; promtool from PATH.
set -euo pipefail
SRC="${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
tools="${SWITCHBOARD_TOOLS_DIR:-$SRC/.cache/tools}"
HELM="$tools/bin/helm"
[ -x "$HELM" ] || {
  echo "FAIL: helm not found at $HELM: run scripts/build-tools.sh helm (make tools), or set SWITCHBOARD_TOOLS_DIR" >&2
  exit 1
}
command -v promtool >/dev/null 2>&1 || {
  echo "FAIL: promtool not found in PATH: install Debian's prometheus package (scripts/install-deps.sh)" >&2
  exit 1
}
chart="$SRC/charts/switchboard"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME="$work/helm-cache" HELM_CONFIG_HOME="$work/helm-config" HELM_DATA_HOME="$work/helm-data"
FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }

# render NAME [--set ...]: helm template into $work/NAME.yaml
render() {
  local name=$1
  shift
  if ! "$HELM" template sb "$chart" -n switchboard "$@" >"$work/$name.yaml" 2>"$work/$name.err"; then
    fail "helm template $*: $(cat "$work/$name.err")"
    return 1
  fi
}

# check NAME ARGS...: the rendered objects of NAME against what ARGS expect
# (tests/observability/chart_check.py)
check() {
  local out
  if out=$(python3 "$SRC/tests/observability/chart_check.py" "$work/$1.yaml" "${@:2}" 2>&1); then
    pass "$1: $out"
  else
    fail "$1: $out"
  fi
}

# --- off by default
render defaults && check defaults --rule-groups none --dashboards 0
render monitor --set metrics.serviceMonitor.enabled=true &&
  check monitor --rule-groups none --dashboards 0 --jobs switchboard-operator,switchboard-webhook

# --- the PrometheusRule: groups of the components this release runs
render rule --set prometheusRule.enabled=true && check rule --rule-groups switchboard-operator,switchboard-webhook \
  --rule-namespace switchboard --dashboards 0
render rule_all --set prometheusRule.enabled=true,authorizer.enabled=true,metrics.serviceMonitor.enabled=true \
  --set prometheusRule.labels.release=prom,prometheusRule.namespace=monitoring &&
  check rule_all --rule-groups switchboard-operator,switchboard-authorizer,switchboard-webhook \
    --rule-namespace monitoring --rule-label release=prom --dashboards 0 \
    --jobs switchboard-operator,switchboard-webhook,switchboard-authorizer
render rule_callout --set prometheusRule.enabled=true,nats.enabled=true,nats.provisioning.mode=AuthCallout,webhook.enabled=false &&
  check rule_callout --rule-groups switchboard-operator,switchboard-authorizer --rule-namespace switchboard --dashboards 0

# the rendered rules are valid Prometheus rules (the fromYaml/toYaml round
# trip kept every expression and template)
if [ -f "$work/rule_all.yaml" ]; then
  python3 - "$work/rule_all.yaml" "$work/rendered-rules.yaml" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "PrometheusRule"]
yaml.safe_dump({"groups": docs[0]["spec"]["groups"]}, open(sys.argv[2], "w"))
EOF
  if out=$(promtool check rules "$work/rendered-rules.yaml" 2>&1); then
    pass "rendered PrometheusRule: promtool check rules: $(grep -o 'SUCCESS.*' <<<"$out")"
  else
    fail "rendered PrometheusRule: promtool check rules: $out"
  fi
fi

# --- the dashboards: one ConfigMap per file of dashboards/
dashboard_files=$(find "$chart/dashboards" -name '*.json' | wc -l)
render dash --set dashboards.enabled=true && check dash --rule-groups none --dashboards "$dashboard_files" \
  --dashboard-label grafana_dashboard=1 --dashboard-namespace switchboard
render dash_custom --set dashboards.enabled=true,dashboards.label=my_dashboards,dashboards.labelValue=yes \
  --set dashboards.namespace=grafana,dashboards.annotations.grafana_folder=Switchboard &&
  check dash_custom --rule-groups none --dashboards "$dashboard_files" --dashboard-label my_dashboards=yes \
    --dashboard-namespace grafana --dashboard-annotation grafana_folder=Switchboard

# --- the schema refuses wrong values, naming them
for bad in "prometheusRule.enabled=yes:/prometheusRule/enabled" "dashboards.label=:/dashboards/label" \
  "prometheusRule.namespace=Not_A_Namespace:/prometheusRule/namespace" "dashboards.colour=red:/dashboards"; do
  set_arg=${bad%%:*} path=${bad#*:}
  out=$("$HELM" template sb "$chart" --set "$set_arg" 2>&1 || true)
  if grep -qF "at '$path'" <<<"$out"; then
    pass "schema refuses $set_arg"
  else
    fail "schema accepted $set_arg (or named another path): $out"
  fi
done

# --- lint with everything on
if out=$("$HELM" lint --strict "$chart" --set prometheusRule.enabled=true,dashboards.enabled=true \
  --set metrics.serviceMonitor.enabled=true,authorizer.enabled=true 2>&1); then
  pass "helm lint --strict with the PrometheusRule, dashboards and ServiceMonitors"
else
  fail "helm lint --strict: $out"
fi

[ "$FAILURES" -eq 0 ] || {
  echo "$FAILURES failure(s)" >&2
  exit 1
}
