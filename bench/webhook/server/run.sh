#!/usr/bin/env bash
# Admission reviews/s over TLS with keep-alive on loopback, measured by wrk
# (an independent client) against the real server: bench_webhook_server
# --serve runs it in-process with a static cache of 200 backends. Then the
# built-in client (closed loop and fixed 1,000 reviews/s).
#   BUILD=build bash bench/webhook/server/run.sh [seconds] [connections]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="${BUILD:-$here/../../../build}"
bin="$build/bin/bench_webhook_server"
secs="${1:-10}"
conns="${2:-4}"
[ -x "$bin" ] || { echo "missing $bin (build with -DSWITCHBOARD_BENCH=ON)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk missing: bash scripts/install-deps.sh" >&2; exit 2; }

out=$(mktemp)
"$bin" --serve 0 >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q '^serving on' "$out" && break; sleep 0.1; done
read -r _ _ port _ body < <(grep '^serving on' "$out")
echo "wrk -t2 -c$conns -d${secs}s https://127.0.0.1:$port/validate (keep-alive, TLS)"
# Server CPU (utime+stime ticks from /proc) per review: steadier than
# reviews/s on a machine shared with other work.
ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
before=$(ticks)
line=$(REVIEW_BODY="$body" wrk -t2 -c"$conns" -d"${secs}s" -s "$here/review.lua" \
  "https://127.0.0.1:$port/validate" | grep '^wrk:')
after=$(ticks)
requests=$(sed 's/.*requests \([0-9]*\).*/\1/' <<<"$line")
echo "$line"
awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$requests" \
  'BEGIN { if (n > 0) printf "server cpu %.1f us/review (%d reviews)\n", t / hz * 1e6 / n, n }'
kill "$server"
wait "$server" 2>/dev/null || true
trap 'rm -f "$out"' EXIT
echo "built-in client:"
"$bin" --seconds "$((secs / 2))" --connections "$conns"
