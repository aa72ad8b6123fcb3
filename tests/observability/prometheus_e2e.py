#!/usr/bin/env python3
"""The chart's alert rules and dashboards on a real Prometheus (Debian's)
scraping a real test cluster (ctest observability_prometheus_e2e, label e2e,
fixture cluster):

  - the operator, two switchboard-authorizer replicas, the webhook (this
    build's binaries) against the fixture's kube-apiserver;
  - three routed nats-server-callout servers on the operator's static
    AuthCallout config, and one more in NATS operator mode (AuthCallout
    with isolation: Accounts: an account per installation, with limits),
    each with a prometheus-nats-exporter run as the official NATS chart
    runs it (tools cache);
  - prometheus on 127.0.0.1 scraping them every second, with the rules of
    the chart's PrometheusRule (helm template, tools cache) as its rule
    file.

Asserts: every rule loads and evaluates without error; every metric name a
rule or a dashboard query uses has a series (except the names in
MAY_BE_MISSING, each with its reason); two engines of one installation show
as its two connections in the operator's usage series and its
status.connections, and as none of another's; an installation with limits
shows each limit and its use; every dashboard variable lists
values and every panel query evaluates without error and returns data
(except the panels named in MAY_BE_EMPTY, each with its reason); the
certificate expiry gauge follows a rotated webhook certificate; stopping
both authorizers drives SwitchboardNoAuthorizer to `firing` in
/api/v1/alerts, and starting them again resolves it.

Test-only override, said here and in the log: SwitchboardNoAuthorizer's
`for:` is 5s instead of 2m (FOR_OVERRIDES), so the test waits on the
operator's recheck of the authorizers (30 s) rather than on the rule.

Everything is started on free loopback ports by this script and stopped by
it (only the processes it started, by their pids); waits are conditions
with deadlines.
"""

import base64
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

SRC = os.environ.get("SWITCHBOARD_SOURCE_DIR") or sys.exit("run through ctest (SWITCHBOARD_SOURCE_DIR)")
BIN = os.path.join(os.environ.get("SWITCHBOARD_BINARY_DIR", ""), "bin")
KUBECONFIG = os.environ.get("SWITCHBOARD_KUBECONFIG") or sys.exit(
    "run through ctest with the cluster fixture (SWITCHBOARD_KUBECONFIG)")
TOOLS = os.environ.get("SWITCHBOARD_TOOLS_DIR") or os.path.join(SRC, ".cache", "tools")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402  the rules' and dashboards' parsers of the unit checks

# The namespace label every target gets, as a ServiceMonitor or PodMonitor
# gives the pod's namespace: a metric's own `namespace` (a NatsServer's)
# then becomes exported_namespace, as in a cluster.
RELEASE_NS = "switchboard-obs"
FOR_OVERRIDES = {"SwitchboardNoAuthorizer": "5s"}
# Grafana's $__rate_interval for a 1 s scrape interval is at least 4 s; 10 s
# keeps two samples in every window.
RATE_INTERVAL = "10s"
# Panels that a healthy cluster leaves without data, and why. Every other
# panel must return data.
MAY_BE_EMPTY = {
    ("fleet.json", "Reconcile errors"):
        "its series appear with the first failed reconcile; none fails here",
    ("webhook.json", "Errors"):
        "result=error only for reviews the webhook cannot judge; every review here is judged",
    ("usage.json", "Slow consumers"):
        "shows installations with a slow consumer in the last hour; no engine here is slow",
}

# Metric names a rule or panel uses that this cluster cannot produce, and
# why. Every other name must have a series: none is exempt today.
MAY_BE_MISSING = {}
# The operator-mode NatsServer's defaults for its installations: the limit
# series and the "Use of limits" panel (connections and subscriptions).
ACCOUNT_LIMITS = {"maxConnections": 10, "maxSubscriptions": 100}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr, flush=True)


def ok(msg):
    print("ok: " + msg, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, cond, timeout, poll=0.2):
    """Polls cond() until it returns a truthy value (returned) or the
    deadline passes (None, and a failure naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = cond()
        except Exception:  # a server not up yet
            v = None
        if v:
            return v
        if time.monotonic() > deadline:
            fail(f"timed out after {timeout} s waiting for {what}")
            return None
        time.sleep(poll)


class Proc:
    """A process this test started, in its own session, logging to a file."""

    def __init__(self, name, argv, logdir, env=None):
        self.name = name
        self.log = os.path.join(logdir, name + ".log")
        e = dict(os.environ)
        e.update(env or {})
        with open(self.log, "ab") as out:
            self.p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=e,
                                      start_new_session=True)

    def running(self):
        return self.p.poll() is None

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=10)

    def tail(self, n=3000):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""


def http_get(url, timeout=3):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def kubectl(*args, stdin=None, check_rc=True):
    r = subprocess.run(["kubectl", "--kubeconfig", KUBECONFIG, *args], input=stdin,
                       capture_output=True, text=True, timeout=60)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {r.stderr.strip()}")
    return r


def secret_data(ns, name):
    r = kubectl("get", "secret", "-n", ns, name, "-o", "json", "--ignore-not-found")
    if not r.stdout.strip():
        return {}
    return {k: base64.b64decode(v).decode() for k, v in json.loads(r.stdout).get("data", {}).items()}


def ready_of(obj):
    for c in obj.get("status", {}).get("conditions", []):
        if c.get("type") == "Ready":
            return c.get("status"), c.get("reason")
    return None, None


class Prometheus:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def api(self, path, **params):
        url = self.base + "/api/v1/" + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            return json.load(e)

    def query(self, q):
        return self.api("query", query=q)

    def value(self, q):
        """The single instant value of `q`, or None."""
        r = self.query(q)
        res = r.get("data", {}).get("result", [])
        return float(res[0]["value"][1]) if r.get("status") == "success" and res else None

    def alerts(self, name):
        r = self.api("alerts")
        return [a for a in r.get("data", {}).get("alerts", []) if a["labels"].get("alertname") == name]


def main():
    tmp = tempfile.mkdtemp(prefix="obs-e2e-")
    procs = {}
    ns = f"obs-e2e-{os.getpid()}-{random.randint(0, 99999)}"
    token = ns  # the namespace label the webhook configurations select
    hook_name = f"switchboard-obs-e2e-{os.getpid()}"
    started_at = time.time()
    created_ns = False
    hooks_applied = False

    def start(name, argv, env=None):
        procs[name] = Proc(name, argv, tmp, env)
        return procs[name]

    try:
        for b in ["switchboard-operator", "switchboard-authorizer", "switchboard-webhook", "switchboard"]:
            if not os.access(os.path.join(BIN, b), os.X_OK):
                fail(f"{BIN}/{b} is not built (cmake --build build --target {b})")
        callout = os.path.join(TOOLS, "bin", "nats-server-callout")
        exporter = os.path.join(TOOLS, "bin", "prometheus-nats-exporter")
        helm = os.path.join(TOOLS, "bin", "helm")
        for t in (callout, exporter, helm):
            if not os.access(t, os.X_OK):
                fail(f"{t} is missing: scripts/build-tools.sh {os.path.basename(t)} (make tools)")
        prometheus = shutil.which("prometheus")
        if not prometheus:
            fail("prometheus not found in PATH: Debian's prometheus package (scripts/install-deps.sh)")
        if failures:
            return

        kubectl("create", "namespace", ns)
        created_ns = True
        kubectl("label", "namespace", ns, f"switchboard.dev/obs-e2e={token}")

        # 1. The operator; the NatsServers: one in AuthCallout mode for the
        # cluster below, one in AuthCallout mode with an account per
        # installation (NATS operator mode, one server: its limits), one in
        # IncludeFile mode with no backend (its file is rendered all the
        # same: the include file's size gauge).
        op_port, op_health = free_port(), free_port()
        start("operator", [f"{BIN}/switchboard-operator", "--kubeconfig", KUBECONFIG, "--namespaces", ns,
                           "--health-addr", f"127.0.0.1:{op_health}", "--metrics-addr",
                           f"127.0.0.1:{op_port}", "--probe-interval", "2s", "--probe-timeout", "2s"])
        servers = [{"client": free_port(), "monitor": free_port(), "cluster": free_port()} for _ in range(3)]
        urls = ",".join(f"nats://127.0.0.1:{s['client']}" for s in servers)
        acc = {"client": free_port(), "monitor": free_port()}
        resolver = os.path.join(tmp, "resolver")
        os.makedirs(resolver)
        kubectl("apply", "-f", "-", stdin=f"""
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: NatsServer
metadata: {{name: callout, namespace: {ns}}}
spec:
  url: "{urls}"
  provisioning: {{mode: AuthCallout}}
---
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: NatsServer
metadata: {{name: accounts, namespace: {ns}}}
spec:
  url: "nats://127.0.0.1:{acc['client']}"
  isolation: Accounts
  installationLimits: {json.dumps(ACCOUNT_LIMITS)}
  provisioning: {{mode: AuthCallout, authCallout: {{resolverDir: "{resolver}"}}}}
---
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: NatsServer
metadata: {{name: file, namespace: {ns}}}
spec:
  url: "nats://127.0.0.1:{free_port()}"
""")
        body = wait_for("the operator's static AuthCallout config in Secret callout-switchboard",
                        lambda: (lambda t: t if "auth_callout" in t else None)(
                            secret_data(ns, "callout-switchboard").get("switchboard.conf", "")), 60)
        acc_body = wait_for("the operator's operator-mode config in Secret accounts-switchboard",
                            lambda: (lambda t: t if "resolver" in t else None)(
                                secret_data(ns, "accounts-switchboard").get("switchboard.conf", "")), 60)
        if not body or not acc_body:
            return

        # 2. Three routed servers on it, each with its exporter.
        with open(os.path.join(tmp, "body.conf"), "w") as f:
            f.write(body + "\n")
        for i, s in enumerate(servers):
            routes = "\n".join(f'    "nats-route://127.0.0.1:{o["cluster"]}"'
                               for j, o in enumerate(servers) if j != i)
            conf = os.path.join(tmp, f"s{i + 1}.conf")
            with open(conf, "w") as f:
                f.write(f'server_name: s{i + 1}\nlisten: "127.0.0.1:{s["client"]}"\n'
                        f'http: "127.0.0.1:{s["monitor"]}"\n'
                        f'cluster {{\n  name: obs\n  listen: "127.0.0.1:{s["cluster"]}"\n'
                        f'  routes: [\n{routes}\n  ]\n}}\ninclude "body.conf"\n')
            start(f"nats-s{i + 1}", [callout, "-c", conf])
        for i, s in enumerate(servers):
            if not wait_for(f"nats-server s{i + 1} routed to the two others",
                            lambda: json.loads(http_get(f"http://127.0.0.1:{s['monitor']}/routez")[1])
                            .get("num_routes", 0) >= 2, 30):
                return
        # The operator-mode server: one, so no routes; its resolver store
        # is the NatsServer's resolverDir.
        with open(os.path.join(tmp, "accounts.conf"), "w") as f:
            f.write(acc_body + "\n")
        with open(os.path.join(tmp, "acc.conf"), "w") as f:
            f.write(f'server_name: acc\nlisten: "127.0.0.1:{acc["client"]}"\n'
                    f'http: "127.0.0.1:{acc["monitor"]}"\ninclude "accounts.conf"\n')
        start("nats-acc", [callout, "-c", os.path.join(tmp, "acc.conf")])
        if not wait_for("the operator-mode nats-server serving",
                        lambda: http_get(f"http://127.0.0.1:{acc['monitor']}/healthz")[0] == 200, 30):
            return
        for name, s in [(f"s{i + 1}", s) for i, s in enumerate(servers)] + [("acc", acc)]:
            s["exporter"] = free_port()
            # As the official chart's prom-exporter container runs it.
            start(f"exporter-{name}", [exporter, "-connz", "-routez", "-subz", "-varz", "-prefix=nats",
                                       "-use_internal_server_id", "-a", "127.0.0.1", "-p",
                                       str(s["exporter"]), f"http://127.0.0.1:{s['monitor']}"])

        # 3. Two authorizers.
        auth_ports = [free_port(), free_port()]

        def start_authorizers():
            for i, p in enumerate(auth_ports):
                start(f"authorizer-{i}", [f"{BIN}/switchboard-authorizer", "--kubeconfig", KUBECONFIG,
                                          "--namespaces", ns, "--servers", f"{ns}/callout,{ns}/accounts",
                                          "--health-addr", f"127.0.0.1:{p}", "--metrics-addr",
                                          f"127.0.0.1:{p}", "--sweep-interval", "2s"])
            for i, p in enumerate(auth_ports):
                if not wait_for(f"authorizer {i} ready",
                                lambda: http_get(f"http://127.0.0.1:{p}/readyz")[0] == 200, 60):
                    return False
            return True

        if not start_authorizers():
            return

        # 4. The webhook, registered for this test's namespace only.
        wh_dir = os.path.join(tmp, "webhook")
        os.makedirs(wh_dir)
        cert, key = os.path.join(wh_dir, "tls.crt"), os.path.join(wh_dir, "tls.key")

        def make_cert(days, out_cert, out_key):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:prime256v1", "-nodes", "-days", str(days), "-subj",
                            "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                            out_key, "-out", out_cert], check=True, capture_output=True)

        make_cert(30, cert, key)
        wh_port, wh_metrics = free_port(), free_port()
        start("webhook", [f"{BIN}/switchboard-webhook", "--bind-address", "127.0.0.1", "--port", str(wh_port),
                          "--metrics-port", str(wh_metrics), "--tls-cert-file", cert, "--tls-key-file", key,
                          "--kubeconfig", KUBECONFIG])
        if not wait_for("the webhook's metrics", lambda: http_get(f"http://127.0.0.1:{wh_metrics}/metrics")[0]
                        == 200, 30):
            return
        with open(cert, "rb") as f:
            ca_bundle = base64.b64encode(f.read()).decode()

        def hook(name, path):
            return {"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                    "failurePolicy": "Ignore", "timeoutSeconds": 5,
                    "clientConfig": {"url": f"https://127.0.0.1:{wh_port}{path}", "caBundle": ca_bundle},
                    "namespaceSelector": {"matchLabels": {"switchboard.dev/obs-e2e": token}},
                    "rules": [{"apiGroups": ["pubsub.switchboard.dev"], "apiVersions": ["v1alpha1"],
                               "operations": ["CREATE", "UPDATE"],
                               "resources": ["pubsubbackends", "natsservers"]}]}

        kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
             "metadata": {"name": hook_name}, "webhooks": [hook("mutate.pubsub.switchboard.dev", "/mutate")]},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
             "metadata": {"name": hook_name},
             "webhooks": [hook("validate.pubsub.switchboard.dev", "/validate")]}]}))
        hooks_applied = True

        # 5. Prometheus with the chart's rules as the chart renders them
        # (the PrometheusRule's groups, the authorizer's included).
        r = subprocess.run([helm, "template", "obs", os.path.join(SRC, "charts", "switchboard"),
                            "--set", "prometheusRule.enabled=true", "--set", "authorizer.enabled=true"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail(f"helm template: {r.stderr.strip()}")
            return
        rendered = [d for d in yaml.safe_load_all(r.stdout) if d and d.get("kind") == "PrometheusRule"]
        if len(rendered) != 1:
            fail(f"helm template rendered {len(rendered)} PrometheusRules, want 1")
            return
        rules = {"groups": rendered[0]["spec"]["groups"]}
        for g in rules["groups"]:
            for r in g["rules"]:
                if r.get("alert") in FOR_OVERRIDES:
                    print(f"test-only override: {r['alert']} for: {r.get('for')} -> "
                          f"{FOR_OVERRIDES[r['alert']]}", flush=True)
                    r["for"] = FOR_OVERRIDES[r["alert"]]
        with open(os.path.join(tmp, "alerts.yaml"), "w") as f:
            yaml.safe_dump(rules, f)

        def job(name, ports, pod):
            return {"job_name": name, "static_configs": [
                {"targets": [f"127.0.0.1:{p}"], "labels": {"namespace": RELEASE_NS, "pod": f"{pod}-{i}"}}
                for i, p in enumerate(ports)]}

        prom_config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": [os.path.join(tmp, "alerts.yaml")],
            "scrape_configs": [job("switchboard-operator", [op_port], "operator"),
                               job("switchboard-authorizer", auth_ports, "authorizer"),
                               job("switchboard-webhook", [wh_metrics], "webhook"),
                               job("nats", [s["exporter"] for s in servers + [acc]], "nats")]}
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            yaml.safe_dump(prom_config, f)
        prom_port = free_port()
        start("prometheus", [prometheus, f"--config.file={tmp}/prometheus.yml",
                             f"--storage.tsdb.path={tmp}/tsdb", f"--web.listen-address=127.0.0.1:{prom_port}"])
        prom = Prometheus(prom_port)
        if not wait_for("prometheus ready", lambda: http_get(prom.base + "/-/ready")[0] == 200, 60):
            return
        # Every target scraped before any traffic, so each panel's window
        # sees the counters move rather than start where they ended.
        targets = sum(len(j["static_configs"]) for j in prom_config["scrape_configs"])
        if not wait_for(f"all {targets} targets up", lambda: prom.value("count(up == 1)") == targets, 30):
            print(json.dumps(prom.api("targets"), indent=1)[:4000], file=sys.stderr)
            return
        ok(f"all {targets} targets up: operator, 2 authorizers, webhook, 4 NATS exporters")

        # 6. Installations, and traffic every panel shows: probes (every 2 s,
        # through the authorizers), a review the webhook denies (a second
        # claim on b0's prefix), a connect the authorizers deny (a wrong
        # password), a request refused before any review (an unknown path),
        # and an engine whose connection the sweep closes (b2 deleted); lim,
        # on the operator-mode server, in an account of its own with limits.
        backends = {"b0": "callout", "b1": "callout", "b2": "callout", "lim": "accounts"}
        for b, server in backends.items():
            kubectl("apply", "-f", "-", stdin=f"""
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {{name: {b}, namespace: {ns}}}
spec: {{kind: nats, nats: {{serverRef: {{name: {server}}}, subjectPrefix: hatchet.{b}}}}}
""")

        def all_ready():
            items = json.loads(kubectl("get", "psb", "-n", ns, "-o", "json").stdout)["items"]
            return len(items) == len(backends) and all(ready_of(i)[0] == "True" for i in items)

        if not wait_for(f"{', '.join(backends)} Ready", all_ready, 90):
            print(kubectl("get", "psb", "-n", ns, "-o", "yaml").stdout, file=sys.stderr)
            return
        ok(f"{len(backends)} PubSubBackends Ready through the authorizers, one in its own account")

        # The operator's gauges against what the API says.
        n = len(backends)
        if wait_for(f"switchboard_pubsubbackends{{ready=\"True\",reason=\"Probed\"}} at {n}",
                    lambda: prom.value('sum(switchboard_pubsubbackends{ready="True", reason="Probed"})') == n
                    and prom.value('sum(switchboard_pubsubbackends{ready!="True"})') == 0, 30):
            ok(f"switchboard_pubsubbackends: {n} Ready with reason Probed, none not Ready")
        file_conf = secret_data(ns, "file-switchboard").get("switchboard.conf", "")
        size = lambda: prom.value(  # noqa: E731
            f'switchboard_natsserver_config_bytes{{exported_namespace="{ns}", name="file"}}')
        if not file_conf:
            fail("the IncludeFile NatsServer's config Secret file-switchboard has no switchboard.conf")
        elif wait_for(f"switchboard_natsserver_config_bytes of NatsServer file at {len(file_conf.encode())}",
                      lambda: size() == len(file_conf.encode()), 30):
            ok(f"switchboard_natsserver_config_bytes is the include file's size ({len(file_conf.encode())} "
               f"bytes) against a ceiling of "
               f"{prom.value('max(switchboard_natsserver_config_max_bytes)'):.0f}")
        if prom.value(f'count(switchboard_natsserver_config_bytes{{name="callout"}})') is not None:
            fail("an AuthCallout NatsServer has an include file size gauge")
        if prom.value("max(switchboard_natsserver_config_max_bytes)") != 1024 * 1024:
            fail("switchboard_natsserver_config_max_bytes is not the Secret's 1 MiB")

        dup = kubectl("apply", "-f", "-", check_rc=False, stdin=f"""
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {{name: dup, namespace: {ns}}}
spec: {{kind: nats, nats: {{serverRef: {{name: callout}}, subjectPrefix: hatchet.b0}}}}
""")
        if dup.returncode == 0 or "denied the request" not in dup.stderr:
            fail(f"the webhook did not deny a second claim on hatchet.b0: rc {dup.returncode}: {dup.stderr}")
        else:
            ok("the webhook denied a second claim on a prefix")

        env = dict(os.environ)
        env.update(secret_data(ns, "b0-pubsub-env"))
        env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] = "not-the-password"
        bad = subprocess.run([f"{BIN}/switchboard", "pubsub", "pub", "--topic", "x", "{}"], env=env,
                             capture_output=True, text=True, timeout=60)
        if bad.returncode == 0:
            fail("a connect with a wrong password was accepted")

        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            urllib.request.urlopen(f"https://127.0.0.1:{wh_port}/no-such-path", context=ctx, timeout=5)
            fail("the webhook answered an unknown path")
        except urllib.error.HTTPError as e:
            if e.code != 404:  # refused before any review, and counted
                fail(f"the webhook answered an unknown path with {e.code}, want 404")

        # Per-installation usage: two engines of b0 show as two connections of
        # b0 and of no other installation, in the collector's series and in
        # b0's status (kubectl get psb's Connections column), within two of
        # the collector's 30 s rounds.
        b0_env = dict(os.environ)
        b0_env.update(secret_data(ns, "b0-pubsub-env"))
        b0_engines = [start(f"engine-b0-{i}", [f"{BIN}/switchboard", "pubsub", "sub", "--topic", "usage"],
                            b0_env) for i in range(2)]
        conns = lambda n: prom.value(  # noqa: E731
            f'sum(switchboard_installation_connections{{exported_namespace="{ns}", name="{n}"}})')
        if wait_for("switchboard_installation_connections of b0 at 2", lambda: conns("b0") == 2, 75):
            if conns("b1") not in (None, 0.0):
                fail(f"b1 shows {conns('b1')} connections, want 0 (b0's engines are b0's only)")
            else:
                ok("two engines of b0 are two connections of b0 and none of b1")
        status_conns = lambda: kubectl(  # noqa: E731
            "get", "psb", "-n", ns, "b0", "-o", "jsonpath={.status.connections}").stdout.strip()
        if wait_for("b0's status.connections at 2", lambda: status_conns() == "2", 75):
            ok("kubectl get psb shows b0's 2 connections")

        # An installation in an account of its own: its engine is one
        # connection of it, against the limits its NatsServer gives it.
        lim_env = dict(os.environ)
        lim_env.update(secret_data(ns, "lim-pubsub-env"))
        start("engine-lim", [f"{BIN}/switchboard", "pubsub", "sub", "--topic", "usage"], lim_env)
        limit = lambda which: prom.value(  # noqa: E731
            f'max(switchboard_installation_limit{{exported_namespace="{ns}", name="lim", limit="{which}"}})')
        if wait_for("lim's connections at 1 and its limits in the scrape",
                    lambda: conns("lim") == 1 and limit("connections") == ACCOUNT_LIMITS["maxConnections"]
                    and limit("subscriptions") == ACCOUNT_LIMITS["maxSubscriptions"], 75):
            ok(f"lim's engine is one connection of its account, against its limits {ACCOUNT_LIMITS}")

        engine_env = dict(os.environ)
        engine_env.update(secret_data(ns, "b2-pubsub-env"))
        engine = start("engine-b2", [f"{BIN}/switchboard", "pubsub", "sub", "--topic", "engine"], engine_env)
        if wait_for("the b2 engine subscribed", lambda: "subscribed to" in engine.tail(), 30):
            kubectl("delete", "psb", "-n", ns, "b2", "--timeout=30s")
            wait_for("the sweep closing the deleted installation's connection",
                     lambda: (prom.value("sum(switchboard_authorizer_kicks_total)") or 0) >= 1, 30)
            if wait_for(f"switchboard_pubsubbackends{{ready=\"True\"}} at {n - 1} after b2's deletion",
                        lambda: prom.value('sum(switchboard_pubsubbackends{ready="True"})') == n - 1, 30):
                ok("switchboard_pubsubbackends follows a deletion")

        # The webhook's certificate rotated on disk: the expiry gauge moves
        # to the new notAfter after the next handshake.
        new_cert, new_key = os.path.join(wh_dir, "new.crt"), os.path.join(wh_dir, "new.key")
        make_cert(60, new_cert, new_key)
        os.replace(new_key, key)
        os.replace(new_cert, cert)
        not_after = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-enddate"], check=True,
                                   capture_output=True, text=True).stdout.strip().split("=", 1)[1]
        want = int(subprocess.run(["date", "-u", "-d", not_after, "+%s"], check=True, capture_output=True,
                                  text=True).stdout)

        def expiry_moved():
            try:
                urllib.request.urlopen(f"https://127.0.0.1:{wh_port}/healthz", context=ctx, timeout=5)
            except OSError:
                pass
            return prom.value("max(switchboard_webhook_certificate_expiration_timestamp_seconds)") == want

        if wait_for(f"the certificate expiry gauge at the rotated certificate's notAfter ({want})",
                    expiry_moved, 30):
            ok("switchboard_webhook_certificate_expiration_timestamp_seconds follows the rotated certificate")

        # 7. Rules: loaded, evaluated without error.
        def rules_evaluated():
            groups = prom.api("rules").get("data", {}).get("groups", [])
            rs = [r for g in groups for r in g["rules"]]
            return rs if rs and all(r.get("lastEvaluation", "").startswith("20") for r in rs) else None

        rs = wait_for("every rule evaluated once", rules_evaluated, 30) or []
        want_alerts = {r["alert"] for _, r in check.alerts(check.load_rules())}
        got_alerts = {r["name"] for r in rs if r.get("type") == "alerting"}
        if got_alerts != want_alerts:
            fail(f"Prometheus loaded alerts {sorted(got_alerts)}, the chart has {sorted(want_alerts)}")
        bad_rules = [(r["name"], r.get("lastError")) for r in rs if r.get("health") != "ok"]
        if bad_rules:
            fail(f"rules that do not evaluate: {bad_rules}")
        else:
            ok(f"all {len(rs)} rules of the rendered PrometheusRule load and evaluate without error")
        if prom.alerts("SwitchboardNoAuthorizer"):
            fail("SwitchboardNoAuthorizer is pending or firing with both authorizers running")

        # 8. Every metric name a rule or a panel uses has a series.
        used = {}
        for _, r in check.alerts(check.load_rules()):
            for n in check.metric_names(r["expr"]):
                used.setdefault(n, set()).add(f"alert {r['alert']}")
        queries = list(check.dashboard_queries())
        for board, title, expr in queries:
            for n in check.metric_names(expr):
                used.setdefault(n, set()).add(f"{board}: {title}")
        missing = lambda: [n for n in sorted(used)  # noqa: E731
                           if n not in MAY_BE_MISSING
                           and not prom.value(f"count(last_over_time({n}[10m]))")]
        if wait_for("a series of every metric name the rules and dashboards use", lambda: not missing(), 30):
            ok(f"all {len(used)} metric names used by rules and dashboards are in the scrape")
        else:
            for n in missing():
                fail(f"{n} (used by {', '.join(sorted(used[n]))}) has no series")

        # 9. Every dashboard variable lists values; every panel query
        # evaluates over the test's time range and returns data.
        for path in check.DASHBOARDS:
            with open(path) as f:
                d = json.load(f)
            for v in d.get("templating", {}).get("list", []):
                if v.get("type") != "query":
                    continue
                defn = v.get("definition", "")
                metric, label = defn[len("label_values("):-1].rsplit(",", 1)
                r = prom.api("label/" + label.strip() + "/values", **{"match[]": metric.strip()})
                if not r.get("data"):
                    fail(f"{os.path.basename(path)}: variable {v['name']} ({defn}) lists no value: {r}")
        def has_data(expr):
            """(evaluated, has data, error): `expr` over the test's time
            range as Grafana queries it."""
            q = expr.replace("$__rate_interval", RATE_INTERVAL).replace("$__interval", "2s")
            q = q.replace("$namespace", ".*").replace("${namespace}", ".*")
            r = prom.api("query_range", query=q, start=f"{started_at:.3f}", end=f"{time.time():.3f}",
                         step="1")
            if r.get("status") != "success":
                return False, False, f"{r.get('error')}: {q}"
            return True, any(v[1] not in ("NaN", "+Inf", "-Inf")
                             for s in r["data"]["result"] for v in s.get("values", [])), q

        # A counter made by the traffic above has one sample for a second:
        # every panel gets until the deadline to show its data.
        pending = {}
        for board, title, expr in queries:
            evaluated, data, why = has_data(expr)
            if not evaluated:
                fail(f"{board}: {title!r}: {why}")
            elif not data:
                pending[(board, title, expr)] = why
        def only_allowed_empty():
            for k in list(pending):
                if has_data(k[2])[1]:
                    del pending[k]
            return not [k for k in pending if k[:2] not in MAY_BE_EMPTY]

        wait_for("every panel but those allowed empty to return data", only_allowed_empty, 20, poll=1)
        empty = []
        for (board, title, _), q in pending.items():
            if (board, title) in MAY_BE_EMPTY:
                empty.append(f"{board}: {title!r} ({MAY_BE_EMPTY[(board, title)]})")
            else:
                fail(f"{board}: panel {title!r} returns no data: {q}")
        ok(f"{len(queries)} panel queries evaluate; without data, as allowed: {empty or 'none'}")

        # 10. Both authorizers stopped: SwitchboardNoAuthorizer fires, for
        # each AuthCallout NatsServer.
        t0 = time.monotonic()
        for i in range(len(auth_ports)):
            procs[f"authorizer-{i}"].stop()
        callout_servers = {"callout", "accounts"}
        firing = wait_for("SwitchboardNoAuthorizer firing in /api/v1/alerts for both AuthCallout servers",
                          lambda: (lambda f: f if {a["labels"].get("name") for a in f} == callout_servers
                                   else None)(
                              [a for a in prom.alerts("SwitchboardNoAuthorizer") if a["state"] == "firing"]),
                          90)
        if firing:
            bad = [a["labels"] for a in firing
                   if a["labels"].get("exported_namespace") != ns or a["labels"].get("severity") != "critical"]
            if bad:
                fail(f"SwitchboardNoAuthorizer fired with labels {bad}")
            else:
                ok(f"SwitchboardNoAuthorizer firing for {sorted(callout_servers)} "
                   f"{time.monotonic() - t0:.0f} s after both authorizers stopped: "
                   f"{firing[0]['annotations'].get('summary')}")
        # ... and resolves once they are back.
        t0 = time.monotonic()
        if start_authorizers() and wait_for("SwitchboardNoAuthorizer resolved (gone from /api/v1/alerts)",
                                            lambda: not prom.alerts("SwitchboardNoAuthorizer"), 90):
            ok(f"SwitchboardNoAuthorizer resolved {time.monotonic() - t0:.0f} s after the authorizers returned")
    finally:
        if failures:
            for name, p in procs.items():
                print(f"--- {name} log (tail):\n{p.tail(2000)}", file=sys.stderr)
        if hooks_applied:
            kubectl("delete", "mutatingwebhookconfiguration,validatingwebhookconfiguration", hook_name,
                    "--ignore-not-found", check_rc=False)
        if created_ns:
            # The operator removes its finalizers: it must still run.
            kubectl("delete", "psb", "--all", "-n", ns, "--timeout=30s", check_rc=False)
            kubectl("delete", "natsserver", "--all", "-n", ns, "--timeout=30s", check_rc=False)
            kubectl("delete", "namespace", ns, "--wait=false", check_rc=False)
        for name in reversed(list(procs)):
            procs[name].stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    # The verdict here, not in main(): its early returns (a step that cannot
    # go on) must fail the test too.
    t = time.time()
    main()
    if failures:
        print(f"prometheus_e2e: {len(failures)} failure(s) in {time.time() - t:.0f} s", file=sys.stderr)
        sys.exit(1)
    print(f"prometheus_e2e: all passed in {time.time() - t:.0f} s")
