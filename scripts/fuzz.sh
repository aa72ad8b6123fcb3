#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz and runs
# them over the committed corpus (fuzz/corpus/<target>/) plus the project's
# sample manifests and test data.
#
#   scripts/fuzz.sh --check    what `make test` runs: the gate replays every
#                              committed input and seed through the clang
#                              ASan + UBSan binaries (the same verdict on
#                              every machine); then a short seeded
#                              exploration (FUZZ_RUNS runs per target,
#                              default 4000) whose finds are reported, not
#                              a verdict: its path depends on the machine
#                              (stack addresses move with the environment's
#                              size and feed libFuzzer's comparison features)
#   scripts/fuzz.sh SECONDS    open-ended exploration (`make fuzz`): each
#                              target for SECONDS; the corpus grows in
#                              build-fuzz/fuzz-corpus/<target>/, and every
#                              crash it finds is copied into
#                              fuzz/corpus/<target>/ to be committed, where
#                              the <target>_replay unit tests replay it in
#                              every later `make test`
#
# Exits non-zero when a target crashes, leaks, times out or reports
# undefined behaviour on a replayed input (--check) or while exploring
# (SECONDS); the reproducer is left in build-fuzz/fuzz-artifacts/.
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

sanitizer_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
common=(-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1)

status=0
found=()
for name in "${targets[@]}"; do
  target="$build/bin/$name"
  artifacts="$build/fuzz-artifacts/$name"
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  committed=()
  [ -d "$root/fuzz/corpus/$name" ] && committed+=("$root/fuzz/corpus/$name")
  log="$build/fuzz-$name.log"
  if [ "$mode" = check ]; then
    # The gate: every committed input and seed, once (-runs=0 stops after
    # the initial corpus), so the verdict is the inputs', not the path's.
    echo "== $name (replay)"
    if ! env "${sanitizer_env[@]}" "$target" -runs=0 -timeout=120 "${common[@]}" \
        -artifact_prefix="$artifacts/" "${committed[@]}" "${seeds[@]}" >"$log" 2>&1; then
      status=1
      echo "fuzz.sh: $name FAILED on a committed input; see $log and $artifacts/" >&2
      tail -40 "$log" >&2
      continue
    fi
    grep -E '^stat::number_of_executed_units' "$log" | tr '\n' ' '
    echo
    # Then a short exploration from a fresh, empty work folder: a fixed
    # seed and run count, no corpus reload (libFuzzer otherwise re-reads its
    # folder on a timer) and, where allowed, no address randomisation keep
    # it close to repeatable on one machine, yet not across machines.
    work="$build/fuzz-check/$name"
    rm -rf "$work"
    mkdir -p "$work"
    echo "== $name ($runs runs, seed 1, reported, not a verdict)"
    if env "${sanitizer_env[@]}" "${launcher[@]}" "$target" -seed=1 -runs="$runs" -timeout=120 \
        -reload=0 "${common[@]}" -artifact_prefix="$artifacts/" "$work" "${committed[@]}" \
        "${seeds[@]}" >"$build/fuzz-$name-explore.log" 2>&1; then
      grep -E '^stat::number_of_executed_units' "$build/fuzz-$name-explore.log" | tr '\n' ' '
      echo
    else
      found+=("$name")
      tail -40 "$build/fuzz-$name-explore.log" >&2
    fi
    continue
  fi
  work="$build/fuzz-corpus/$name"
  mkdir -p "$work"
  echo "== $name (${seconds}s)"
  if env "${sanitizer_env[@]}" "$target" -max_total_time="$seconds" -timeout=10 "${common[@]}" \
      -artifact_prefix="$artifacts/" "$work" "${committed[@]}" "${seeds[@]}" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units' "$log" | tr '\n' ' '
    echo
    continue
  fi
  status=1
  echo "fuzz.sh: $name FAILED; see $log and $artifacts/" >&2
  tail -40 "$log" >&2
  mkdir -p "$root/fuzz/corpus/$name"
  for f in "$artifacts"/*; do
    [ -f "$f" ] || continue
    cp "$f" "$root/fuzz/corpus/$name/"
    echo "fuzz.sh: added fuzz/corpus/$name/$(basename "$f"): fix the bug, then commit the input" >&2
  done
done
for name in "${found[@]}"; do
  # Loud, but not the gate's verdict: the input is a bug all the same.
  echo "fuzz.sh: WARNING: exploring $name found a failing input (Base64 above); it is in" \
    "$build/fuzz-artifacts/$name/. Reproduce it with build/bin/${name}_replay FILE, fix the bug" \
    "and commit the input as fuzz/corpus/$name/crash-<what-it-was>." >&2
done
exit $status
