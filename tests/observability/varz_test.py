#!/usr/bin/env python3
"""The NATS names the dashboards may use (nats_exporter_metrics.txt) against
real servers: each nats_varz_<key> must be a number in /varz, which is what
prometheus-nats-exporter turns into that metric (-varz -prefix=nats, as the
official NATS chart runs it). Checked on Debian's nats-server (PATH) and on
the pinned release the chart deploys (nats-server-callout from the tools
cache, make tools). Label integration: it starts servers on free loopback
ports and stops them.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.environ.get("SWITCHBOARD_SOURCE_DIR") or sys.exit(
    "run through ctest (needs SWITCHBOARD_SOURCE_DIR)")
TOOLS = os.environ.get("SWITCHBOARD_TOOLS_DIR") or os.path.join(SRC, ".cache", "tools")
LIST = os.path.join(SRC, "tests", "observability", "nats_exporter_metrics.txt")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def varz_of(binary):
    """Starts `binary` with monitoring on a free port, returns /varz."""
    port, mport = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = open(os.path.join(tmp, "nats.log"), "w+")
        proc = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(port), "-m", str(mport)],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 20
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"{binary} exited {proc.returncode}: {log.read()}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{mport}/varz", timeout=2) as r:
                        return json.load(r)
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{binary}: /varz not answered within 20 s")
                    # Poll until the monitoring port listens.
                    time.sleep(0.05)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main():
    names = []
    with open(LIST) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(line)
    if not names:
        sys.exit(f"FAIL: no names in {LIST}")
    servers = []
    debian = shutil.which("nats-server")
    if not debian:
        sys.exit("FAIL: nats-server not found in PATH (Debian's nats-server, scripts/install-deps.sh)")
    servers.append(debian)
    pinned = os.path.join(TOOLS, "bin", "nats-server-callout")
    if not os.access(pinned, os.X_OK):
        sys.exit(f"FAIL: {pinned} not found: run scripts/build-tools.sh nats-server-callout (make tools)")
    servers.append(pinned)
    failures = 0
    for binary in servers:
        varz = varz_of(binary)
        version = varz.get("version", "?")
        for n in names:
            key = n[len("nats_varz_"):]
            v = varz.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                print(f"ok: {n}: /varz {key} = {v} (nats-server {version})")
            else:
                print(f"FAIL: {n}: /varz of nats-server {version} has {key} = {v!r}, not a number",
                      file=sys.stderr)
                failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
