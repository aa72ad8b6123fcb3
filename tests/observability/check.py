#!/usr/bin/env python3
"""Checks of the chart's alert rules and Grafana dashboards (ctest, label unit).

  check.py rules         every alert: a severity, summary, description and a
                         runbook_url whose section exists in docs/runbooks.md;
                         a case in alerts_test.yaml where it fires and one
                         where it must not; only the groups the chart's
                         template knows
  check.py metric-names  every metric a rule or a dashboard query uses is one
                         the C++ code registers (read from the source, so a
                         rename fails here) or a listed NATS exporter name;
                         every label it matches or groups on is one the
                         registering file names, every value one the C++
                         code spells
  check.py dashboards    every dashboard is valid JSON with a unique uid, a
                         $datasource variable, and every panel but rows has a
                         query; every query parses (promtool check rules on
                         the queries with Grafana's variables filled in)

Run through ctest (SWITCHBOARD_SOURCE_DIR is the source tree).
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("SWITCHBOARD_SOURCE_DIR") or sys.exit(
    "run through ctest (needs SWITCHBOARD_SOURCE_DIR)")
CHART = os.path.join(SRC, "charts", "switchboard")
RULES = os.path.join(CHART, "files", "alerts.yaml")
DASHBOARDS = sorted(glob.glob(os.path.join(CHART, "dashboards", "*.json")))
TESTS = os.path.join(SRC, "tests", "observability", "alerts_test.yaml")
NATS_LIST = os.path.join(SRC, "tests", "observability", "nats_exporter_metrics.txt")
RUNBOOKS = os.path.join(SRC, "docs", "runbooks.md")
# The groups templates/prometheusrule.yaml includes or leaves out by component.
TEMPLATE_GROUPS = {"switchboard-operator", "switchboard-authorizer", "switchboard-webhook"}
# Where the binaries register their metric families.
EXPORTING_DIRS = ["operator", "authorizer", "webhook", "pubsub-runtime", "kube", "common"]

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def ok(msg):
    print("ok: " + msg)


def finish():
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)


def load_rules():
    with open(RULES) as f:
        return yaml.safe_load(f)


def alerts(doc):
    for g in doc["groups"]:
        for r in g["rules"]:
            if "alert" in r:
                yield g["name"], r


def dashboard_queries():
    """(dashboard file, panel title, expr) for every target of every panel."""
    for path in DASHBOARDS:
        with open(path) as f:
            d = json.load(f)
        for p in all_panels(d.get("panels", [])):
            for t in p.get("targets", []):
                yield os.path.basename(path), p.get("title", "?"), t.get("expr", "")


def all_panels(panels):
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))


# ---------------------------------------------------------------- PromQL names
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "bool", "offset", "inf", "nan", "atan2", "start", "end"}


def metric_names(expr):
    """The metric names a PromQL expression selects (not functions, labels,
    keywords or Grafana variables)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    e = re.sub(r"\$\{[^}]*\}|\$\w+", " ", e)          # Grafana variables
    e = re.sub(r"\{[^}]*\}", " ", e)                   # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                  # ranges and subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def exported_names():
    """Every series name the binaries can export, from the C++ source:
    prometheus-cpp's Build{Counter,Gauge,Histogram,Summary}().Name("...")."""
    out = {}
    pat = re.compile(r"Build(Counter|Gauge|Histogram|Summary|Info)\(\)\s*\.Name\(\s*\"([^\"]+)\"")
    for d in EXPORTING_DIRS:
        for root, _, files in os.walk(os.path.join(SRC, d)):
            for fn in files:
                if not fn.endswith((".cc", ".h")):
                    continue
                path = os.path.join(root, fn)
                with open(path, errors="replace") as f:
                    text = f.read()
                for m in pat.finditer(text):
                    kind, name = m.group(1), m.group(2)
                    rel = os.path.relpath(path, SRC)
                    series = [name]
                    if kind == "Histogram":
                        series += [name + "_bucket", name + "_sum", name + "_count"]
                    elif kind == "Summary":
                        series += [name + "_sum", name + "_count"]
                    for s in series:
                        out[s] = rel
    return out


def nats_names():
    names = set()
    with open(NATS_LIST) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                names.add(line)
    return names


def check_metric_names():
    # The extractor itself, on expressions whose answer is known: a checker
    # that finds nothing would pass every rule.
    cases = {
        'sum by (kind, result) (rate(switchboard_reconcile_total{result="error", namespace=~"$namespace"}[$__rate_interval]))':
            {"switchboard_reconcile_total"},
        'absent(up{job="switchboard-operator"} == 1) and on () count(foo_bar) > 0': {"up", "foo_bar"},
        'histogram_quantile(0.99, sum by (le) (rate(a_bucket{le="2.5"}[5m]))) / ignoring(x) b_count offset 5m':
            {"a_bucket", "b_count"},
        '1 - x_total{reason=~"a|b"} / on (namespace) group_left (pod) y': {"x_total", "y"},
    }
    for expr, want in cases.items():
        got = metric_names(expr)
        if got != want:
            fail(f"metric_names({expr!r}) = {sorted(got)}, want {sorted(want)}")
    exported = exported_names()
    if len(exported) < 20:
        fail(f"found only {len(exported)} exported series in {EXPORTING_DIRS}: is the pattern stale?")
    for must in ["switchboard_leader", "switchboard_authorizer_decisions_total",
                 "switchboard_webhook_requests_total"]:
        if must not in exported:
            fail(f"{must} not found in the C++ source")
    nats = nats_names()
    for n in nats:
        if not re.fullmatch(r"nats_varz_[a-z_]+", n):
            fail(f"{NATS_LIST}: {n} is not a nats_varz_<key> name the chart's exporter emits")
    known = set(exported) | nats | {"up"}

    used = {}
    for group, r in alerts(load_rules()):
        for n in metric_names(r["expr"]):
            used.setdefault(n, []).append(f"alert {r['alert']}")
    for board, title, expr in dashboard_queries():
        for n in metric_names(expr):
            used.setdefault(n, []).append(f"{board}: {title}")
    if not used:
        fail("no metric found in any rule or dashboard")
    check_label_matchers(exported)
    for n, where in sorted(used.items()):
        if n in known:
            ok(f"{n} ({'exported by ' + exported[n] if n in exported else 'NATS exporter' if n in nats else 'Prometheus'})")
        else:
            fail(f"{n} (used by {', '.join(sorted(set(where)))}) is exported by no binary "
                 f"and is not a listed NATS exporter name ({os.path.relpath(NATS_LIST, SRC)})")
    finish()


# Labels Prometheus or the scrape adds (not the binaries); `job` is checked
# against the chart's ServiceMonitors by chart_test.sh.
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "endpoint", "container",
                 "exported_namespace", "le"}
# Where label values are spelled (the decision code names them, the metrics
# code records them).
VALUE_DIRS = EXPORTING_DIRS + ["api"]


def cpp_literals(dirs):
    lits = set()
    for d in dirs:
        for root, _, files in os.walk(os.path.join(SRC, d)):
            for fn in files:
                if fn.endswith((".cc", ".h")):
                    with open(os.path.join(root, fn), errors="replace") as f:
                        lits.update(re.findall(r'"([A-Za-z0-9_]+)"', f.read()))
    return lits


def check_label_matchers(exported):
    """A matcher on a label of one of our metrics names a label the metric's
    registering file sets, and values that the C++ code spells: so renaming
    `result="QueueFull"` or the `reason` label fails here, not silently in
    production."""
    literals = cpp_literals(VALUE_DIRS)
    file_literals = {}
    exprs = [(f"alert {r['alert']}", r["expr"]) for _, r in alerts(load_rules())]
    exprs += [(f"{b}: {t}", e) for b, t, e in dashboard_queries()]
    checked = 0
    for where, expr in exprs:
        for m in re.finditer(r"\b(switchboard_\w+)\s*\{([^}]*)\}", expr):
            metric, matchers = m.group(1), m.group(2)
            if metric not in exported:
                continue  # reported by check_metric_names
            path = os.path.join(SRC, exported[metric])
            if path not in file_literals:
                with open(path, errors="replace") as f:
                    file_literals[path] = set(re.findall(r'"([A-Za-z0-9_]+)"', f.read()))
            for lm in re.finditer(r'(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"', matchers):
                label, value = lm.group(1), lm.group(3)
                if label in TARGET_LABELS:
                    continue
                if label not in file_literals[path]:
                    fail(f"{where}: {metric} has no label {label} ({exported[metric]} never names it)")
                if "$" in value or not re.fullmatch(r"[A-Za-z0-9_.+]+(\|[A-Za-z0-9_.+]+)*", value):
                    continue
                for v in value.split("|"):
                    if label == "le":
                        continue
                    if v not in literals:
                        fail(f"{where}: {metric}{{{label}=\"{v}\"}}: no C++ source spells \"{v}\"")
                    checked += 1
        # Grouping labels (by, without, on, ignoring): each is named by a
        # file registering one of the expression's metrics.
        ours = {n for n in metric_names(expr) if n in exported}
        files = {os.path.join(SRC, exported[n]) for n in ours}
        for path in files:
            if path not in file_literals:
                with open(path, errors="replace") as f:
                    file_literals[path] = set(re.findall(r'"([A-Za-z0-9_]+)"', f.read()))
        for g in re.finditer(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", expr):
            for label in [x.strip() for x in g.group(1).split(",") if x.strip()]:
                if label in TARGET_LABELS or not files:
                    continue
                if not any(label in file_literals[p] for p in files):
                    fail(f"{where}: groups by {label}, which none of {sorted(ours)} has")
                checked += 1
    if checked == 0:
        fail("no label value checked: is the matcher pattern stale?")
    else:
        ok(f"{checked} label names and values of matchers and groupings are spelled in the C++ source")


# ----------------------------------------------------------------------- rules
def github_anchor(heading):
    a = heading.strip().lower()
    a = re.sub(r"[^\w\- ]", "", a)
    return a.replace(" ", "-")


def check_rules():
    doc = load_rules()
    groups = {g["name"] for g in doc["groups"]}
    if groups != TEMPLATE_GROUPS:
        fail(f"groups {sorted(groups)}, but templates/prometheusrule.yaml selects {sorted(TEMPLATE_GROUPS)}")
    with open(RUNBOOKS) as f:
        runbook_text = f.read()
    anchors = {github_anchor(h) for h in re.findall(r"^#+\s+(.*)$", runbook_text, re.M)}
    with open(TESTS) as f:
        tests = yaml.safe_load(f)
    fires, quiet = set(), set()
    for t in tests["tests"]:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
    names = []
    for group, r in alerts(doc):
        name = r["alert"]
        names.append(name)
        sev = r.get("labels", {}).get("severity")
        if sev not in ("critical", "warning", "info"):
            fail(f"{name}: severity {sev!r}, want critical, warning or info")
        ann = r.get("annotations", {})
        for k in ("summary", "description", "runbook_url"):
            if not ann.get(k):
                fail(f"{name}: no {k} annotation")
        url = ann.get("runbook_url", "")
        m = re.fullmatch(r"https://github\.com/switchboard-dev/switchboard/blob/main/docs/runbooks\.md#([\w-]+)", url)
        if not m:
            fail(f"{name}: runbook_url {url!r} is not a section of docs/runbooks.md")
        elif m.group(1) not in anchors:
            fail(f"{name}: docs/runbooks.md has no section #{m.group(1)}")
        elif m.group(1) != name.lower():
            fail(f"{name}: runbook_url points at #{m.group(1)}, not at its own section")
        if name not in fires:
            fail(f"{name}: no case in alerts_test.yaml where it fires")
        if name not in quiet:
            fail(f"{name}: no case in alerts_test.yaml where it must not fire")
        if not failures:
            ok(f"{name}: {sev}, annotations, runbook #{name.lower()}, fires and stays quiet in tests")
    if len(names) != len(set(names)):
        fail("an alert name appears twice")
    for a in fires | quiet:
        if a not in names:
            fail(f"alerts_test.yaml tests {a}, which is not a rule")
    finish()


# ------------------------------------------------------------------ dashboards
def check_dashboards():
    if len(DASHBOARDS) < 4:
        fail(f"expected the fleet, connect-path, webhook and NATS dashboards, found {DASHBOARDS}")
    uids = {}
    exprs = []
    for path in DASHBOARDS:
        name = os.path.basename(path)
        try:
            with open(path) as f:
                d = json.load(f)
        except ValueError as e:
            fail(f"{name}: not valid JSON: {e}")
            continue
        for k in ("uid", "title", "panels"):
            if not d.get(k):
                fail(f"{name}: no {k}")
        if d.get("uid") in uids:
            fail(f"{name}: uid {d['uid']} also used by {uids[d['uid']]}")
        uids[d.get("uid")] = name
        variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
        if variables.get("datasource", {}).get("type") != "datasource":
            fail(f"{name}: no datasource variable (a fixed data source uid breaks on import)")
        panels = list(all_panels(d.get("panels", [])))
        queried = 0
        ids = set()
        for p in panels:
            title = p.get("title", "?")
            if p.get("id") in ids:
                fail(f"{name}: panel id {p.get('id')} twice")
            ids.add(p.get("id"))
            if p.get("type") == "row":
                continue
            targets = [t for t in p.get("targets", []) if t.get("expr", "").strip()]
            if not targets:
                fail(f"{name}: panel {title!r} has no query")
                continue
            for t in p.get("targets", []):
                ds = t.get("datasource") or p.get("datasource") or {}
                if ds.get("uid") != "${datasource}":
                    fail(f"{name}: panel {title!r} query {t.get('refId')} does not use ${{datasource}}")
                for v in re.findall(r"\$(\w+)", t.get("expr", "")):
                    if v not in variables and not v.startswith("__"):
                        fail(f"{name}: panel {title!r} uses ${v}, which is not a variable of the dashboard")
                exprs.append((name, title, t["expr"]))
            queried += 1
        if queried == 0:
            fail(f"{name}: no panel with a query")
        else:
            ok(f"{name}: {queried} panels, each with a query")
    parse_with_promtool(exprs)
    finish()


def parse_with_promtool(exprs):
    """Every query must parse: promtool check rules on recording rules made
    of the queries, Grafana's variables replaced by what Grafana sends."""
    promtool = shutil.which("promtool")
    if not promtool:
        fail("promtool not found in PATH: install Debian's prometheus package (scripts/install-deps.sh)")
        return
    rules = []
    for i, (board, title, expr) in enumerate(exprs):
        e = expr.replace("$__rate_interval", "2m").replace("$__interval", "1m")
        e = re.sub(r"\$\{?namespace\}?", ".*", e)
        rules.append({"record": f"dashboard:query_{i}", "expr": e})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "queries.yaml")
        with open(path, "w") as f:
            yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}, f)
        r = subprocess.run([promtool, "check", "rules", path], capture_output=True, text=True)
        if r.returncode != 0:
            fail("a dashboard query does not parse:\n" + r.stdout + r.stderr)
            for i, (board, title, expr) in enumerate(exprs):
                if f"query_{i}" in r.stdout + r.stderr:
                    fail(f"  {board}: {title!r}: {expr}")
        else:
            ok(f"all {len(exprs)} dashboard queries parse (promtool)")


if __name__ == "__main__":
    cmds = {"rules": check_rules, "metric-names": check_metric_names, "dashboards": check_dashboards}
    if len(sys.argv) != 2 or sys.argv[1] not in cmds:
        sys.exit(f"usage: check.py {'|'.join(cmds)}")
    cmds[sys.argv[1]]()
