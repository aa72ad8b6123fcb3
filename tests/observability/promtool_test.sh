#!/usr/bin/env bash
# `promtool check rules` and `promtool test rules` on the alert rules the
# chart ships (charts/switchboard/files/alerts.yaml), with the cases in
# alerts_test.yaml: every alert fires in one and must stay quiet in another.
# promtool comes from Debian's prometheus package (scripts/install-deps.sh).
set -euo pipefail
SRC="${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
command -v promtool >/dev/null 2>&1 || {
  echo "FAIL: promtool not found in PATH: install Debian's prometheus package (scripts/install-deps.sh)" >&2
  exit 1
}
rules="$SRC/charts/switchboard/files/alerts.yaml"
promtool check rules "$rules"
# promtool resolves rule_files relative to the test file; run it on the
# file in place so the test reads the chart's file, not a copy.
promtool test rules "$SRC/tests/observability/alerts_test.yaml"
