#!/usr/bin/env bash
# What the scripts print without starting anything: run-local.sh --help is
# its usage text (no code), and images.sh names the nats images at the
# versions values.yaml gives, read with a YAML parser.
set -euo pipefail
: "${SWITCHBOARD_SOURCE_DIR:?run through ctest (needs SWITCHBOARD_SOURCE_DIR)}"
SRC=$SWITCHBOARD_SOURCE_DIR
FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }

rc=0
help=$(bash "$SRC/scripts/run-local.sh" --help) || rc=$?
[ "$rc" = 0 ] && pass "run-local.sh --help exits 0" || fail "run-local.sh --help: exit $rc"
grep -q '^Usage: scripts/run-local.sh \[--show-secrets\] \[--no-wait\]$' <<<"$help" && pass "it prints the usage line" ||
  fail "no usage line in:"$'\n'"$help"
grep -q -- '--show-secrets  ' <<<"$help" && grep -q -- '--no-wait  ' <<<"$help" && pass "and each option" || fail "options missing"
code=$(grep -E '^(#|set |root=|[a-z_]+=|.*\$\(|.*\) *;;)' <<<"$help" || true)
[ -z "$code" ] && pass "and no code or comment markers" || fail "code in --help:"$'\n'"$code"
rc=0
bash "$SRC/scripts/run-local.sh" --bogus >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] && pass "an unknown argument exits 2" || fail "unknown argument: exit $rc"

want=$(python3 -c 'import sys, yaml; v = yaml.safe_load(open(sys.argv[1]))["nats"]; print(v["image"]["tag"].split("-")[0], v["reloader"]["tag"])' \
  "$SRC/charts/switchboard/values.yaml")
names=$(bash "$SRC/scripts/images.sh" names)
grep -qx "nats=localhost/switchboard/nats:${want% *}-1" <<<"$names" && pass "images.sh names nats-server ${want% *} (values.yaml)" ||
  fail "want nats ${want% *}:"$'\n'"$names"
grep -qx "reloader=localhost/switchboard/nats-server-config-reloader:${want#* }-standin-1" <<<"$names" &&
  pass "and the reloader ${want#* }" || fail "want reloader ${want#* }:"$'\n'"$names"

if [ "$FAILURES" -gt 0 ]; then
  echo "cli_test: $FAILURES failure(s)" >&2
  exit 1
fi
echo "cli_test: all passed"
