# One retry policy for every download step (apt-get, mmdebstrap, Go module
# downloads and builds). Sourced, never run: scripts/install-deps.sh,
# scripts/build-tools.sh and scripts/images.sh source it; the Dockerfile's
# build stage copies it beside install-deps.sh.
#
# retry STEP COMMAND [ARGS...] -> runs COMMAND (a program or a shell
# function) until it succeeds, at most $SWITCHBOARD_RETRY_ATTEMPTS times
# (default 4). Between attempts it prints
#   retry: STEP failed (attempt I/N): LAST ERROR LINE; retrying in Ss
# and sleeps S seconds: $SWITCHBOARD_RETRY_DELAY (default 5) doubled after
# each attempt, at most $SWITCHBOARD_RETRY_MAX_DELAY (default 60). After the
# last attempt it prints
#   retry: STEP failed after N attempts: LAST ERROR LINE
# and returns the command's exit code. COMMAND's stderr still reaches the
# terminal as it is written; its last non-empty line is what the messages
# quote.
#
# A shell function given as COMMAND runs with errexit off (bash ignores
# `set -e` in a command whose status is tested): it must return its own
# failure. A COMMAND that leaves a background child holding its stderr
# keeps retry waiting until that child exits.
#
# Not retried, because another attempt cannot change the answer: exit code
# 126 or 127 (the command cannot be run or is not found), and a misuse of
# retry itself (no command, or a setting that is not a number), which
# returns 2 at once with a usage message.
retry() {
  if [ $# -lt 2 ] || [ -z "$1" ]; then
    echo "retry: usage: retry STEP COMMAND [ARGS...] (got: ${*:-nothing})" >&2
    return 2
  fi
  local step=$1
  shift
  local attempts=${SWITCHBOARD_RETRY_ATTEMPTS:-4} delay=${SWITCHBOARD_RETRY_DELAY:-5}
  local max_delay=${SWITCHBOARD_RETRY_MAX_DELAY:-60}
  local v
  for v in "SWITCHBOARD_RETRY_ATTEMPTS=$attempts" "SWITCHBOARD_RETRY_DELAY=$delay" "SWITCHBOARD_RETRY_MAX_DELAY=$max_delay"; do
    if ! [[ ${v#*=} =~ ^[0-9]+$ ]]; then
      echo "retry: usage: ${v%%=*} must be a whole number, not '${v#*=}' (step $step)" >&2
      return 2
    fi
  done
  if [ "$attempts" -lt 1 ]; then
    echo "retry: usage: SWITCHBOARD_RETRY_ATTEMPTS must be at least 1 (step $step)" >&2
    return 2
  fi
  local errfile i rc last fd tee_pid
  errfile=$(mktemp "${TMPDIR:-/tmp}/retry.XXXXXX")
  for ((i = 1; ; i++)); do
    rc=0
    # tee keeps stderr live and keeps a copy; waiting for it once the
    # command is done makes sure the copy is complete before it is read.
    exec {fd}> >(tee "$errfile" >&2)
    tee_pid=$!
    "$@" 2>&"$fd" {fd}>&- || rc=$?
    exec {fd}>&-
    wait "$tee_pid" 2>/dev/null || true
    [ "$rc" -eq 0 ] && break
    last=$(grep -v '^[[:space:]]*$' "$errfile" | tail -n 1 | cut -c1-300)
    [ -n "$last" ] || last="exit code $rc"
    if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
      echo "retry: $step cannot run (exit code $rc, not retried): $last" >&2
      break
    fi
    if [ "$i" -ge "$attempts" ]; then
      echo "retry: $step failed after $attempts attempt(s): $last" >&2
      break
    fi
    echo "retry: $step failed (attempt $i/$attempts): $last; retrying in ${delay}s" >&2
    sleep "$delay"
    delay=$((delay * 2 > max_delay ? max_delay : delay * 2))
  done
  rm -f "$errfile"
  return "$rc"
}
