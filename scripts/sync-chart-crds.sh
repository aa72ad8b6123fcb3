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
  # The chart must hold exactly crds/*.yaml, byte for byte (samples/ and
  # README.md are not CRDs and stay out of the chart).
  bad=0
  for f in "$src"/*.yaml; do
    if ! cmp -s "$f" "$dst/$(basename "$f")"; then
      echo "sync-chart-crds: charts/switchboard/crds/$(basename "$f") is missing or differs from crds/$(basename "$f")" >&2
      bad=1
    fi
  done
  for f in "$dst"/*; do
    [ -e "$f" ] || continue
    if [ ! -e "$src/$(basename "$f")" ]; then
      echo "sync-chart-crds: charts/switchboard/crds/$(basename "$f") has no source in crds/" >&2
      bad=1
    fi
  done
  if [ "$bad" = 0 ]; then
    echo "sync-chart-crds: chart CRDs match crds/"
    exit 0
  fi
  echo "sync-chart-crds: run scripts/sync-chart-crds.sh to copy crds/*.yaml into the chart" >&2
  exit 1
fi

mkdir -p "$dst"
rm -f "$dst"/*.yaml
cp "$src"/*.yaml "$dst"/
echo "sync-chart-crds: copied $(ls "$src"/*.yaml | wc -l) CRDs into $dst"
