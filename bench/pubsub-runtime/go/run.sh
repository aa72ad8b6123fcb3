#!/usr/bin/env bash
# gzip side by side in one run: the runtime (build/bin/bench_pubsub_gzip)
# against Hatchet's CompressPayloads on Go's compress/gzip at its default
# level (go test in this folder), on the same payload bytes (the fnv32
# column proves it). Rounds alternate Go and C++ so machine noise hits both;
# ratios are of process CPU time (the machine is shared; wall time is
# printed too).
#
#   BUILD=build bash bench/pubsub-runtime/go/run.sh [rounds, default 3] [seconds per benchmark, default 1]
#
# Columns: go = Go's CompressPayloads; publish = the runtime's publish-side
# step (TryCompressMessage: gzip level 1, declining a message as soon as a
# payload does not shrink); gzip-all = libdeflate level 1 on every payload
# (what gzip itself costs, nothing declined).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="${BUILD:-$here/../../../build}"
bin="$build/bin/bench_pubsub_gzip"
rounds="${1:-3}"
secs="${2:-1}"
[ -x "$bin" ] || { echo "missing $bin (cmake --build build --target bench_pubsub_gzip)" >&2; exit 2; }
command -v go >/dev/null || { echo "go not found (needed for the Go side of this benchmark only)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version | cut -d' ' -f3-)   c++: $bin"
(cd "$here" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go test -c -o "$tmp/gzipgo.test" .)

for r in $(seq "$rounds"); do
  "$tmp/gzipgo.test" -test.run '^$' -test.bench 'CompressPayloads' -test.benchtime "${secs}s" >"$tmp/go.$r.txt"
  "$bin" --benchmark_filter='^(CompressPayloads/|GzipEachPayload/.*/libdeflate-1)' \
    --benchmark_min_time="$secs" --benchmark_format=csv 2>/dev/null >"$tmp/cpp.$r.csv"
  # key wall_ns cpu_ns fnv32, one file per side and round
  awk '/^BenchmarkCompressPayloads\// {
         name = $1; sub(/^BenchmarkCompressPayloads\//, "", name); sub(/-[0-9]+$/, "", name)
         for (i = 2; i <= NF; i++) {
           if ($i == "ns/op") wall = $(i-1)
           if ($i == "cpu-ns/op") cpu = $(i-1)
           if ($i == "fnv32") fnv = $(i-1)
         }
         print name, wall, cpu, fnv
       }' "$tmp/go.$r.txt" >"$tmp/go.$r"
  awk -F, 'NR > 1 {
         name = $1; gsub(/"/, "", name); sub(/\/process_time$/, "", name)
         fnv = $8; gsub(/"|fnv32=/, "", fnv); if (fnv == "") fnv = "-"
         kind = name; sub(/\/.*/, "", kind)
         key = name; sub(/^[^\/]*\//, "", key); sub(/\/libdeflate-1$/, "", key)
         print kind, key, $3, $4, fnv
       }' "$tmp/cpp.$r.csv" >"$tmp/cpp.$r"
  echo
  echo "round $r (CPU µs per message; ratio = Go / runtime)"
  printf '%-18s %10s %10s %8s %10s %8s %6s\n' shape/size go publish ratio gzip-all ratio bytes
  while read -r key gwall gcpu gfnv; do
    read -r _ _ pwall pcpu pfnv < <(grep "^CompressPayloads $key " "$tmp/cpp.$r")
    read -r _ _ awall acpu _ < <(grep "^GzipEachPayload $key " "$tmp/cpp.$r")
    same=$([ "$gfnv" = "$pfnv" ] && echo same || echo DIFFER)
    awk -v k="$key" -v g="$gcpu" -v p="$pcpu" -v a="$acpu" -v s="$same" 'BEGIN {
      printf "%-18s %10.1f %10.1f %7.1fx %10.1f %7.1fx %6s\n", k, g / 1e3, p / 1e3, g / p, a / 1e3, g / a, s }'
    echo "$key $gcpu $pcpu $acpu" >>"$tmp/all"
  done <"$tmp/go.$r"
done

echo
echo "median over $rounds round(s): CPU ratio Go / runtime, and cost relative to 1x10KiB of the same shape"
printf '%-18s %8s %9s   %8s %8s %8s\n' shape/size publish gzip-all go publish gzip-all
sort -k1,1 "$tmp/all" | awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { keys[$1] = 1; rp[$1] = rp[$1] " " $2 / $3; ra[$1] = ra[$1] " " $2 / $4
    g[$1] = g[$1] " " $2; p[$1] = p[$1] " " $3; a[$1] = a[$1] " " $4 }
  END {
    for (k = 0; k < 2; k++) {
      shape = k ? "json" : "random"
      split("1x10KiB 10x10KiB 100x10KiB 10x100KiB", sizes, " ")
      base = shape "/1x10KiB"
      for (s = 1; s <= 4; s++) {
        key = shape "/" sizes[s]
        if (!(key in keys)) continue
        printf "%-18s %7.1fx %8.1fx   %7.1fx %7.1fx %7.1fx\n", key, median(rp[key]), median(ra[key]),
          median(g[key]) / median(g[base]), median(p[key]) / median(p[base]), median(a[key]) / median(a[base])
      }
    }
  }'
