#!/usr/bin/env bash
# Runs every benchmark program the build produced (build/bin/bench_*), then
# any bench/*/run.sh that needs servers. Results go to build/bench-results/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${BUILD:-$root/build}"
out="$build/bench-results"
mkdir -p "$out"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)" | tee "$out/machine.txt"
for b in "$build"/bin/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  echo "== $name"
  "$b" | tee "$out/$name.txt"
done
for s in "$root"/bench/*/run.sh "$root"/bench/*/*/run.sh; do
  [ -f "$s" ] || continue
  echo "== $s"
  BUILD="$build" bash "$s" | tee "$out/$(basename "$(dirname "$s")").txt"
done
