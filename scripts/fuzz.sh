#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) in build-fuzz (components
# common, api, kube, webhook, pubsub-runtime; FUZZ_COMPONENTS overrides) and runs each
# for SECONDS (default 60) with a seed corpus from crds/samples and the tests'
# testdata. Exits non-zero when a target crashes, leaks or times out; the
# reproducer is left in build-fuzz/fuzz-artifacts/<target>/.
#   scripts/fuzz.sh 10     # the smoke run `make test` does
set -euo pipefail
seconds="${1:-60}"
root=$(cd "$(dirname "$0")/.." && pwd)
build="${FUZZ_BUILD:-$root/build-fuzz}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
jobs="${JOBS:-2}"

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs clang)" >&2
  exit 2
fi

instrument="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# Configure every time (cheap when cached) so a changed component list applies.
generator_args=()
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator="Unix Makefiles"
  command -v ninja >/dev/null 2>&1 && generator=Ninja
  generator_args=(-G "$generator")
fi
cmake -S "$root" -B "$build" "${generator_args[@]}" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$instrument" -DCMAKE_CXX_FLAGS="$instrument" \
    -DSWITCHBOARD_FUZZ=ON -DSWITCHBOARD_TESTS=OFF -DSWITCHBOARD_BENCH=OFF \
    -DSWITCHBOARD_COMPONENTS="${FUZZ_COMPONENTS:-common;api;kube;webhook;pubsub-runtime}" >/dev/null
cmake --build "$build" -j "$jobs"

# Seeds: every sample manifest and test input the project has.
seeds="$build/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
n=0
while IFS= read -r -d '' f; do
  cp "$f" "$seeds/seed-$n"
  n=$((n + 1))
done < <(find "$root/crds/samples" "$root/tests" -type f \
           \( -path '*/samples/*' -o -path '*/testdata/*' \) \
           \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -print0 2>/dev/null)
echo "fuzz.sh: $n seed files"

status=0
# Targets are named <what>_fuzz (switchboard_add_fuzzers in fuzz/CMakeLists.txt).
targets=$(find "$build/bin" -maxdepth 1 -type f -name '*_fuzz' -perm -u+x | sort)
if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz targets were built" >&2
  exit 2
fi
for target in $targets; do
  name=$(basename "$target")
  corpus="$build/fuzz-corpus/$name"
  artifacts="$build/fuzz-artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  extra=()
  # A target may ship its own seeds (e.g. AdmissionReview bodies).
  [ -d "$root/fuzz/webhook/seeds/$name" ] && extra+=("$root/fuzz/webhook/seeds/$name")
  echo "== $name (${seconds}s)"
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$corpus" "$seeds" "${extra[@]}" > "$build/fuzz-$name.log" 2>&1; then
    echo "fuzz.sh: $name FAILED; see $build/fuzz-$name.log and $artifacts/" >&2
    tail -40 "$build/fuzz-$name.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^Done' "$build/fuzz-$name.log" | tr '\n' ' '
    echo
  fi
done
exit $status
