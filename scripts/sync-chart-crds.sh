#!/usr/bin/env bash
# crds/ is the single source of truth for the API; the Helm chart ships the
# same files in charts/switchboard/crds/ (Helm installs that folder before the
# templates). Copies, not symlinks: `helm package` and GitOps tools that
# fetch the chart folder alone would not follow a link out of the chart.
#
# Usage: scripts/sync-chart-crds.sh          copy crds/*.yaml into the chart
#        scripts/sync-chart-crds.sh --check  exit 1 (and say what to run) when they differ
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/crds"
dst="$root/charts/switchboard/crds"

if [ "${1:-}" = --check ]; then
  # Compare the sets of files and their bytes; samples/ is not part of the chart.
  if diff -r -x samples -x invalid "$src" "$dst" >&2; then
    echo "sync-chart-crds: chart CRDs match crds/"
    exit 0
  fi
  echo "sync-chart-crds: charts/switchboard/crds differs from crds/; run scripts/sync-chart-crds.sh" >&2
  exit 1
fi

mkdir -p "$dst"
rm -f "$dst"/*.yaml
cp "$src"/*.yaml "$dst"/
echo "sync-chart-crds: copied $(ls "$src"/*.yaml | wc -l) CRDs into $dst"
