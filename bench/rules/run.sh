#!/usr/bin/env bash
# `switchboard validate` beside kubeconform on the same 50,000 generated
# resources (bench_validate --keep), CPU time and peak memory per run.
# kubeconform is built from its Go module at the pinned version into the
# tools cache; its schemas are generated from crds/ the way its
# openapi2jsonschema -strict does (additionalProperties: false on every
# object that lists properties), named <kind>-<version>.json.
#   BUILD=build bash bench/rules/run.sh [reps]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/tool-versions.sh"
build="${BUILD:-$root/build}"
reps="${1:-2}"
tools="${SWITCHBOARD_TOOLS_DIR:-$root/.cache/tools}"
kc="$tools/kubeconform-$KUBECONFORM_VERSION"
for b in bench_validate switchboard; do
  [ -x "$build/bin/$b" ] || { echo "missing $build/bin/$b (cmake --build build --target $b)" >&2; exit 2; }
done
if [ ! -x "$kc" ]; then
  command -v go >/dev/null || { echo "go not found (needed to build kubeconform)" >&2; exit 2; }
  mkdir -p "$tools"
  gobin=$(mktemp -d)
  GOBIN="$gobin" go install "github.com/yannh/kubeconform/cmd/kubeconform@v$KUBECONFORM_VERSION"
  mv "$gobin/kubeconform" "$kc"
  rmdir "$gobin"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bin/bench_validate" --resources 50000 --reps 1 --keep "$work/corpus" >/dev/null
python3 - "$work/schemas" "$root"/crds/*.yaml <<'PY'
import json, os, sys, yaml

def strict(node):
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for v in node.values():
            strict(v)
    elif isinstance(node, list):
        for v in node:
            strict(v)

out = sys.argv[1]
os.makedirs(out)
for path in sys.argv[2:]:
    crd = yaml.safe_load(open(path))
    kind = crd["spec"]["names"]["kind"].lower()
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        strict(schema)
        with open(os.path.join(out, f"{kind}-{version['name']}.json"), "w") as f:
            json.dump(schema, f)
PY

n=$(find "$work/corpus/yaml" -type f | xargs cat | grep -c '^kind:' || true)
echo "$n resources in $work/corpus/yaml; CPU = user+sys; per CPU-s = resources / CPU"
measure() {  # label command...
  /usr/bin/time -f "%U %S %M" -o "$work/time" "${@:2}" >/dev/null 2>&1 || true
  awk -v l="$1" -v n="$n" '{ cpu = $1 + $2; printf "%-34s cpu %6.2f s  %7.0f resources per CPU-s  peak %4.0f MB\n", l, cpu, (cpu > 0 ? n / cpu : 0), $3 / 1024 }' "$work/time"
}
for rep in $(seq "$reps"); do
  measure "switchboard validate (run $rep)" "$build/bin/switchboard" validate -o json "$work/corpus/yaml"
  measure "kubeconform $KUBECONFORM_VERSION (run $rep)" "$kc" -summary \
    -schema-location "$work/schemas/{{.ResourceKind}}-{{.ResourceAPIVersion}}.json" "$work/corpus/yaml"
done
# What kubeconform concluded (every resource valid is the expected answer).
"$kc" -summary -schema-location "$work/schemas/{{.ResourceKind}}-{{.ResourceAPIVersion}}.json" \
  "$work/corpus/yaml" | tail -1 || true
