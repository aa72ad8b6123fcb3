#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz and runs
# them over the committed corpus (fuzz/corpus/<target>/) plus the project's
# sample manifests and test data.
#
#   scripts/fuzz.sh --check    the gate `make test` runs: a fixed seed and a
#                              fixed number of runs per target (FUZZ_RUNS,
#                              default 4000), so a commit gets the same
#                              verdict on every machine
#   scripts/fuzz.sh SECONDS    open-ended exploration (`make fuzz`): each
#                              target for SECONDS; the corpus grows in
#                              build-fuzz/fuzz-corpus/<target>/, and every
#                              crash it finds is copied into
#                              fuzz/corpus/<target>/ to be committed, where
#                              the <target>_replay unit tests replay it in
#                              every later `make test`
#
# Exits non-zero when a target crashes, leaks, times out or reports
# undefined behaviour; the reproducer is left in build-fuzz/fuzz-artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${FUZZ_BUILD:-$root/build-fuzz}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
jobs="${JOBS:-2}"

mode=explore
seconds=60
case "${1:-}" in
  --check) mode=check ;;
  '') ;;
  *[!0-9]*) echo "usage: scripts/fuzz.sh --check | SECONDS" >&2; exit 2 ;;
  *) seconds=$1 ;;
esac
runs="${FUZZ_RUNS:-4000}"

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs clang)" >&2
  exit 2
fi

instrument="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
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
    -DSWITCHBOARD_FUZZ=ON -DSWITCHBOARD_TESTS=OFF -DSWITCHBOARD_BENCH=OFF >/dev/null
mapfile -t targets < <(grep -v '^$' "$build/fuzz-targets.txt")
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets are defined (fuzz/*/ *_fuzz.cc)" >&2
  exit 2
fi
# Only the fuzz targets and what they link, not the whole tree.
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# The same shared seed folders as the replay tests (fuzz/CMakeLists.txt).
seeds=()
for d in "$root/crds/samples" "$root"/tests/*/testdata "$root"/tests/*/*/testdata "$root"/tests/*/golden; do
  [ -d "$d" ] && seeds+=("$d")
done

launcher=()
if [ "$mode" = check ]; then
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    launcher=(setarch "$(uname -m)" -R)
  else
    echo "fuzz.sh: setarch -R is not permitted here; runs keep address randomisation" >&2
  fi
fi

status=0
for name in "${targets[@]}"; do
  target="$build/bin/$name"
  artifacts="$build/fuzz-artifacts/$name"
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  committed=()
  [ -d "$root/fuzz/corpus/$name" ] && committed+=("$root/fuzz/corpus/$name")
  if [ "$mode" = check ]; then
    # A fresh, empty first folder takes what the run discovers, so the
    # committed corpus and a previous run cannot change this run's verdict.
    work="$build/fuzz-check/$name"
    rm -rf "$work"
    mkdir -p "$work"
    # Bit-for-bit repeatable: a fixed seed and run count; no corpus reload
    # (libFuzzer re-reads its folder on a timer, which makes the path
    # depend on machine speed); and, where allowed, no address
    # randomisation (pointer values feed its comparison features).
    limits=(-seed=1 -runs="$runs" -timeout=120 -reload=0)
    echo "== $name ($runs runs, seed 1)"
  else
    work="$build/fuzz-corpus/$name"
    mkdir -p "$work"
    limits=(-max_total_time="$seconds" -timeout=10)
    echo "== $name (${seconds}s)"
  fi
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "${launcher[@]}" "$target" "${limits[@]}" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work" "${committed[@]}" "${seeds[@]}" \
      >"$build/fuzz-$name.log" 2>&1; then
    grep -E '^stat::number_of_executed_units' "$build/fuzz-$name.log" | tr '\n' ' '
    echo
    continue
  fi
  status=1
  echo "fuzz.sh: $name FAILED; see $build/fuzz-$name.log and $artifacts/" >&2
  tail -40 "$build/fuzz-$name.log" >&2
  if [ "$mode" = explore ]; then
    mkdir -p "$root/fuzz/corpus/$name"
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      cp "$f" "$root/fuzz/corpus/$name/"
      echo "fuzz.sh: added fuzz/corpus/$name/$(basename "$f"): fix the bug, then commit the input" >&2
    done
  fi
done
exit $status
