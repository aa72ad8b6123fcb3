#!/usr/bin/env python3
"""Checks one `helm template` output of the chart (chart_test.sh):

  chart_check.py RENDERED.yaml --rule-groups none|g1,g2 --dashboards N
      [--rule-namespace NS] [--rule-label k=v] [--jobs j1,j2]
      [--dashboard-label k=v] [--dashboard-namespace NS] [--dashboard-annotation k=v]

Prints a one-line summary; exits 1 with every mismatch.
"""

import argparse
import glob
import json
import os
import re
import sys

import yaml

SRC = os.environ["SWITCHBOARD_SOURCE_DIR"]
CHART = os.path.join(SRC, "charts", "switchboard")
JOB_LABEL = "switchboard.dev/job"
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")

p = argparse.ArgumentParser()
p.add_argument("rendered")
p.add_argument("--rule-groups", required=True)
p.add_argument("--rule-namespace")
p.add_argument("--rule-label", action="append", default=[])
p.add_argument("--dashboards", type=int, required=True)
p.add_argument("--dashboard-label")
p.add_argument("--dashboard-namespace")
p.add_argument("--dashboard-annotation", action="append", default=[])
p.add_argument("--jobs")
a = p.parse_args()

errors = []
summary = []
docs = [d for d in yaml.safe_load_all(open(a.rendered)) if d]

# Every object: apiVersion, kind and a valid name.
for d in docs:
    meta = d.get("metadata") or {}
    name = meta.get("name", "")
    if not d.get("apiVersion") or not d.get("kind"):
        errors.append(f"an object without apiVersion or kind: {name!r}")
    if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > 253:
        errors.append(f"{d.get('kind')}: invalid name {name!r}")
    for k, v in (meta.get("labels") or {}).items():
        if not isinstance(v, str) or len(v) > 63:
            errors.append(f"{d.get('kind')} {name}: label {k}={v!r} is not a label value")
summary.append(f"{len(docs)} objects")

# The PrometheusRule.
with open(os.path.join(CHART, "files", "alerts.yaml")) as f:
    file_groups = {g["name"]: g for g in yaml.safe_load(f)["groups"]}
rules = [d for d in docs if d.get("kind") == "PrometheusRule"]
want_groups = [] if a.rule_groups == "none" else a.rule_groups.split(",")
if not want_groups:
    if rules:
        errors.append(f"{len(rules)} PrometheusRule(s) rendered, want none")
else:
    if len(rules) != 1:
        errors.append(f"{len(rules)} PrometheusRules rendered, want 1")
    else:
        r = rules[0]
        if r["apiVersion"] != "monitoring.coreos.com/v1":
            errors.append(f"PrometheusRule apiVersion {r['apiVersion']}")
        got = r.get("spec", {}).get("groups", [])
        names = [g.get("name") for g in got]
        # The template keeps the file's order.
        want_order = [n for n in file_groups if n in want_groups]
        if names != want_order or sorted(names) != sorted(want_groups):
            errors.append(f"PrometheusRule groups {names}, want {want_order}")
        for g in got:
            if g.get("name") in file_groups and g != file_groups[g["name"]]:
                errors.append(f"PrometheusRule group {g['name']} differs from files/alerts.yaml")
        ns = r["metadata"].get("namespace")
        if a.rule_namespace and ns != a.rule_namespace:
            errors.append(f"PrometheusRule namespace {ns}, want {a.rule_namespace}")
        labels = r["metadata"].get("labels", {})
        for kv in a.rule_label:
            k, v = kv.split("=", 1)
            if labels.get(k) != v:
                errors.append(f"PrometheusRule label {k}={labels.get(k)!r}, want {v!r}")
        summary.append(f"PrometheusRule with {names}")

# The dashboards.
files = {os.path.basename(x)[:-5]: x for x in glob.glob(os.path.join(CHART, "dashboards", "*.json"))}
label_key, label_value = (a.dashboard_label.split("=", 1) if a.dashboard_label else ("grafana_dashboard", None))
cms = [d for d in docs if d.get("kind") == "ConfigMap" and label_key in (d["metadata"].get("labels") or {})]
if len(cms) != a.dashboards:
    errors.append(f"{len(cms)} ConfigMaps labelled {label_key}, want {a.dashboards}")
if a.dashboards and a.dashboards != len(files):
    errors.append(f"want {a.dashboards} dashboards, the chart has {len(files)} files")
seen = set()
for cm in cms:
    meta = cm["metadata"]
    name = meta["name"]
    if label_value is not None and meta["labels"][label_key] != label_value:
        errors.append(f"{name}: {label_key}={meta['labels'][label_key]!r}, want {label_value!r}")
    if a.dashboard_namespace and meta.get("namespace") != a.dashboard_namespace:
        errors.append(f"{name}: namespace {meta.get('namespace')}, want {a.dashboard_namespace}")
    for kv in a.dashboard_annotation:
        k, v = kv.split("=", 1)
        if (meta.get("annotations") or {}).get(k) != v:
            errors.append(f"{name}: annotation {k} is {(meta.get('annotations') or {}).get(k)!r}, want {v!r}")
    data = cm.get("data") or {}
    if len(data) != 1:
        errors.append(f"{name}: {len(data)} data keys, want one dashboard")
        continue
    (key, text), = data.items()
    m = re.fullmatch(r"switchboard-(.+)\.json", key)
    if not m or m.group(1) not in files:
        errors.append(f"{name}: data key {key} is not switchboard-<dashboard>.json")
        continue
    seen.add(m.group(1))
    try:
        rendered = json.loads(text)
    except ValueError as e:
        errors.append(f"{name}: {key} is not JSON: {e}")
        continue
    with open(files[m.group(1)]) as f:
        if rendered != json.load(f):
            errors.append(f"{name}: {key} differs from dashboards/{m.group(1)}.json")
    if len(text.encode()) > 900 * 1024:
        errors.append(f"{name}: {len(text)} bytes, near the ConfigMap limit of 1 MiB")
if a.dashboards and seen != set(files):
    errors.append(f"dashboards rendered {sorted(seen)}, files {sorted(files)}")
if cms:
    summary.append(f"{len(cms)} dashboard ConfigMaps")

# ServiceMonitors: the job name of each is its Service's switchboard.dev/job.
if a.jobs is not None:
    services = [d for d in docs if d.get("kind") == "Service"]
    jobs = set()
    for sm in [d for d in docs if d.get("kind") == "ServiceMonitor"]:
        spec = sm["spec"]
        if spec.get("jobLabel") != JOB_LABEL:
            errors.append(f"ServiceMonitor {sm['metadata']['name']}: jobLabel {spec.get('jobLabel')!r}, want {JOB_LABEL}")
            continue
        sel = spec["selector"]["matchLabels"]
        matched = [s for s in services
                   if all((s["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items())
                   and any(port.get("name") == "metrics" for port in s["spec"].get("ports", []))]
        if len(matched) != 1:
            errors.append(f"ServiceMonitor {sm['metadata']['name']} selects {len(matched)} metrics Services")
            continue
        job = matched[0]["metadata"]["labels"].get(JOB_LABEL)
        if not job:
            errors.append(f"Service {matched[0]['metadata']['name']} has no {JOB_LABEL} label")
        jobs.add(job)
    want = set(a.jobs.split(","))
    if jobs != want:
        errors.append(f"ServiceMonitor job names {sorted(jobs)}, want {sorted(want)}")
    # Every job an included rule group selects is one a ServiceMonitor gives.
    for g in want_groups:
        for r in file_groups[g]["rules"]:
            for j in re.findall(r'job="([^"]+)"', r["expr"]):
                if j not in jobs:
                    errors.append(f"alert {r['alert']} selects job {j}, which no ServiceMonitor gives")
    summary.append(f"jobs {sorted(jobs)}")

if errors:
    print("\n".join(errors))
    sys.exit(1)
print(", ".join(summary))
