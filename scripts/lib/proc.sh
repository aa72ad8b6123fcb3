# Process, port, fd and ownership helpers shared by scripts/cluster.sh,
# scripts/node.sh, scripts/run-local.sh and scripts/images.sh. Sourced,
# never run.
#
# The sourcing script sets $run (pid files) and $logs (one NAME.log per
# process) and defines log and die. Every process is recorded by NAME:
# run/NAME.pid holds its pid, run/NAME.exe the path of its binary, so a
# recycled pid (or a zombie left by a dead parent) is never taken for ours,
# and only what we started is ever signalled.

# alive NAME -> the process in run/NAME.pid is alive, not a zombie, and
# still runs the binary we started.
alive() {
  local pidfile="$run/$1.pid" pid exe want
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  exe=${exe% (deleted)} # the binary was rebuilt (replaced) while it ran
  # A state folder from before .exe files were written names the binary
  # NAME; one from before they held a path, its basename.
  want=$(cat "$run/$1.exe" 2>/dev/null || echo "$1")
  case "$want" in
    /*) [ "$exe" = "$want" ] ;;
    *) [ "$(basename "$exe")" = "$want" ] ;;
  esac
}

# start NAME BINARY ARGS... -> runs BINARY detached (own session, no
# inherited stdio, so ctest or a terminal does not wait on it), logging to
# logs/NAME.log; records its pid and binary. Returns once the child runs
# BINARY. Fails, with the log's last lines, when it never does: the exec
# failed (no such file, not executable) or BINARY exited at once, before it
# was seen running; a daemon that exits that fast did not start.
start() {
  local name=$1 bin=$2
  shift 2
  mkdir -p "$logs" "$run"
  # 9>&- : the child must not inherit a caller's flock, or it would hold it forever.
  setsid "$bin" "$@" </dev/null >>"$logs/$name.log" 2>&1 9>&- &
  local pid=$! i
  echo "$pid" >"$run/$name.pid"
  readlink -f "$(command -v "$bin" || echo "$bin")" >"$run/$name.exe"
  # Until it has exec'd, the pid runs setsid and `alive` says no.
  for ((i = 0; i < 100; i++)); do
    alive "$name" && return 0
    [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || break
    sleep 0.1
  done
  if [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
    log "$name ($pid) did not exec $bin within 10 s; last log lines:"
    kill -KILL "$pid" 2>/dev/null || true
  else
    log "$name did not start: $bin could not be run or exited at once; last log lines:"
  fi
  tail -n 20 "$logs/$name.log" >&2 || true
  rm -f "$run/$name.pid" "$run/$name.exe"
  return 1
}

# without_inherited_fds COMMAND [ARGS...] -> runs COMMAND with only stdin,
# stdout and stderr open (in a subshell; redirections on the call apply).
# What a caller holds open (ctest's log file, flock fds, retry's tee) pushes
# the fds a program opens for itself past 9, and a program that hands such
# an fd to /bin/sh fails there: dash takes single-digit fds only ("Bad fd
# number"). mmdebstrap's apt hook `cat >&N` failed so under ctest (N = 11).
without_inherited_fds() (
  local fd
  for fd in /proc/"$BASHPID"/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
  done
  exec "$@"
)

# stop NAME [GRACE_TENTHS [DRAINED...]] -> SIGTERM, wait up to GRACE_TENTHS
# tenths of a second (default 100), then SIGKILL; only our own process.
# DRAINED, a command: polled for up to 10 s after SIGTERM; once it succeeds
# the process has done all that matters and gets 1 s more before a SIGKILL
# that is not worth a warning.
stop() {
  local name=$1 grace=${2:-100} pid i
  shift $(($# < 2 ? $# : 2))
  if alive "$name"; then
    pid=$(cat "$run/$name.pid")
    kill -TERM "$pid" 2>/dev/null || true
    if [ $# -gt 0 ]; then
      for ((i = 0; i < 100; i++)); do
        "$@" && break
        sleep 0.1
      done
      grace=10
    fi
    for ((i = 0; i < grace; i++)); do
      alive "$name" || break
      sleep 0.1
    done
    if alive "$name"; then
      [ $# -gt 0 ] || log "$name ($pid) still running $((grace / 10)) s after SIGTERM; killing"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        alive "$name" || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$run/$name.pid" "$run/$name.exe"
}

# wait_for WHAT SECONDS PROCESS COMMAND... -> polls COMMAND every 100 ms
# until it succeeds; fails early when PROCESS died (e.g. its port was taken
# after we picked it), printing its last log lines.
wait_for() {
  local what=$1 secs=$2 proc=$3 i
  shift 3
  for ((i = 0; i < secs * 10; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    if ! alive "$proc"; then
      log "$proc exited while waiting for $what; last log lines:"
      tail -n 20 "$logs/$proc.log" >&2 || true
      return 1
    fi
    sleep 0.1
  done
  log "$what not ready after ${secs}s; last $proc log lines:"
  tail -n 20 "$logs/$proc.log" >&2 || true
  return 1
}

port_free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }

# free_port -> a TCP port nobody listens on, random between 10000 and the
# start of the kernel's ephemeral range: a port in that range can be taken
# by any outgoing connection between this check and the server's bind. The
# caller retries when a server then fails to bind.
free_port() {
  local p i ephemeral_low
  ephemeral_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "${ephemeral_low:-0}" -gt 11000 ] 2>/dev/null || ephemeral_low=32768
  for ((i = 0; i < 200; i++)); do
    p=$((10000 + (RANDOM * 32768 + RANDOM) % (ephemeral_low - 10000)))
    if port_free "$p"; then
      echo "$p"
      return 0
    fi
  done
  die "no free port found"
}

# ---------------------------------------------------------------- ownership

# A state folder, and what a node makes machine-wide (bridge, routes,
# iptables chains), is removed only by the checkout and state folder whose
# `up` made it: `up` writes a stamp naming both, and each removal checks the
# stamp first. A copied state folder names the original, so its pid files
# and folders are left alone too. Needs $dir (the state folder) and $root
# (the checkout).

# owner_id -> what a stamp of this script and state folder says
owner_id() { echo "dir=$(cd "$dir" && pwd -P) source=$(cd "$root" && pwd -P)"; }

# stamp_claim FILE -> FILE names us: written now when absent (atomically,
# so two `up`s cannot both claim it); fails when it names another owner.
stamp_claim() {
  local me
  me=$(owner_id)
  (set -C && echo "$me" >"$1") 2>/dev/null && return 0
  [ "$(cat "$1" 2>/dev/null)" = "$me" ]
}

# stamp_mine FILE -> FILE exists and names us
stamp_mine() { [ -f "$1" ] && [ "$(cat "$1" 2>/dev/null)" = "$(owner_id)" ]; }

# stamp_owner FILE -> who FILE names ("nobody" when absent)
stamp_owner() { cat "$1" 2>/dev/null || echo nobody; }
