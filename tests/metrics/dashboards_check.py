#!/usr/bin/env python3
"""The Grafana dashboards (helm/ballast/files/dashboards/) proven on a real
Prometheus that scraped a real job run.

  dashboards_check.py --source-dir DIR --ballast BALLAST --worker WORKER
                      [--namespace NS] [--render OUT_DIR]

1. Statically: each dashboard has its fixed uid, `ballast-` and its file's
   name, and a link to another dashboard names one of those uids; every
   panel and target uses the `${datasource}` variable, the JSON names no
   other uid, no query, legend or variable names `job` or `namespace` (the
   scrape's labels, not the WeightedJob's), and every metric a query names
   is a family of docs/metrics.md (or a recording rule of
   prometheus/ballast-rules.yaml).
2. Starts Debian's `prometheus` on loopback (a temporary config and data
   directory, scrape interval 1 s, without honor_labels as a shared
   Prometheus scrapes, the rules file loaded), the
   operator against $KUBECONFIG's API server for namespace NS (a suspended
   WeightedJob applied there gives it a reconcile), the node probe on the
   captured tree of a throttled Pi 4B, and `ballast run` of a primes job,
   the probe's, coordinator's and workers' /metrics scraped.
3. Every query variable returns values, and every panel's query parses
   (/api/v1/query: Prometheus 2.42 has no parse-only endpoint) and returns
   a series with a non-NaN value over the run (/api/v1/query_range), but
   for the queries of series the run cannot produce (NO_DATA_IN_RUN), which
   must parse and may return nothing.
With --render, each panel's data is drawn to OUT_DIR/DASHBOARD-PANEL.png
(python3-matplotlib) for docs/dashboards.md.
"""

import argparse
import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exposition  # noqa: E402

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# What Grafana would put for its variables and macros, for this short run.
RATE_INTERVAL = "10s"
# Series this run has no source for, and why: a query naming only these must
# parse, and may return no data.
NO_DATA_IN_RUN = {
    "ballast_job_efficiency": "the operator sets it when a WeightedJob finishes; the test's "
                              "job stays suspended, and `ballast run` has no operator",
    "ballast_job_energy_joules": "the operator sets it when a WeightedJob succeeds; the test's "
                                 "job stays suspended",
    "ballast_node_baseline_ratio": "the operator sets it when a finished WeightedJob judged a "
                                   "node against its history; the test's job stays suspended",
}


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def ok(message):
    print(f"ok: {message}")


def load_dashboards(directory):
    dashboards = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as handle:
                try:
                    dashboards[name[:-5]] = json.load(handle)
                except json.JSONDecodeError as error:
                    fail(f"{path}: not JSON: {error}")
    if not dashboards:
        fail(f"no dashboards in {directory}")
    return dashboards


def panels_of(dashboard):
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])  # rows


def uids(node, path="$"):
    """Every (path, value) of a 'uid' key in the JSON but the dashboard's own."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "uid" and path != "$":
                yield path + ".uid", value
            yield from uids(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from uids(value, f"{path}[{index}]")


def recorded_names(rules_path):
    with open(rules_path, encoding="utf-8") as handle:
        return set(re.findall(r"^\s*- record: (\S+)", handle.read(), re.MULTILINE))


# A query that names the scrape's `job` or `namespace` as if they were the
# WeightedJob's: a filter, a grouping, a match or a legend.
TARGET_LABEL_RE = re.compile(r"(?<![\w])(job|namespace)\s*(=~|!~|!=|=)|"
                             r"\b(by|on|without|ignoring)\s*\(([^)]*)\)|"
                             r"\{\{\s*(job|namespace)\s*\}\}")


def target_labels(expr):
    """The scrape's labels `expr` names: `job`, `namespace`."""
    found = []
    for match in TARGET_LABEL_RE.finditer(expr):
        if match.group(1):
            found.append(match.group(1))
        elif match.group(4) is not None:
            found += [label for label in re.split(r"\s*,\s*", match.group(4).strip())
                      if label in ("job", "namespace")]
        elif match.group(5):
            found.append(match.group(5))
    return found


def dashboard_links(dashboard):
    """(where, url) of every link of the dashboard and its panels."""
    for link in dashboard.get("links", []):
        yield "links", link.get("url", "")
    for panel in panels_of(dashboard):
        for link in panel.get("links", []):
            yield f"panel {panel.get('title')!r}", link.get("url", "")


def uid_problems(dashboards):
    """Each dashboard's uid must be ballast-NAME, and a link to /d/UID name one
    of them; the problems found."""
    problems = []
    own = {f"ballast-{name}" for name in dashboards}
    for name, dashboard in dashboards.items():
        if dashboard.get("uid") != f"ballast-{name}":
            problems.append(f"{name}: uid is {dashboard.get('uid')!r}, expected 'ballast-{name}'")
        for where, url in dashboard_links(dashboard):
            match = re.match(r"^/d/([^/?]+)", url)
            if match and match.group(1) not in own:
                problems.append(f"{name}: {where} links {url}, no dashboard's uid")
    return problems


def check_uids(dashboards):
    for problem in uid_problems(dashboards):
        fail(problem)
    # The check sees a missing uid and a link to no dashboard (it is not vacuous).
    broken = copy.deepcopy(dashboards)
    name = sorted(broken)[0]
    del broken[name]["uid"]
    broken[name].setdefault("links", []).append({"title": "x", "type": "link",
                                                 "url": "/d/no-such-dashboard"})
    if len(uid_problems(broken)) != 2:
        fail(f"the uid check missed a problem: {uid_problems(broken)}")
    ok(f"{len(dashboards)} dashboards have their fixed uids: "
       f"{', '.join(sorted(d['uid'] for d in dashboards.values()))}")


METRIC_RE = re.compile(r"\b(ballast(?:_[a-z0-9]+)+|ballast:[a-zA-Z0-9_:]+)")


def unknown_metrics(expr, contract, recorded):
    """Metrics `expr` names that are neither documented families nor recorded."""
    unknown = []
    for name in METRIC_RE.findall(expr):
        if ":" in name:
            if name not in recorded:
                unknown.append(name)
            continue
        base = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name[: -len(suffix)] in contract:
                base = name[: -len(suffix)]
        if base not in contract:
            unknown.append(name)
    return unknown


def check_static(dashboards, contract, recorded):
    check_uids(dashboards)
    count = 0
    for name, dashboard in dashboards.items():
        variables = dashboard.get("templating", {}).get("list", [])
        if not any(v.get("name") == "datasource" and v.get("type") == "datasource"
                   and v.get("query") == "prometheus" for v in variables):
            fail(f"{name}: no datasource variable of type prometheus")
        for path, value in uids(dashboard):
            if value != "${datasource}":
                fail(f"{name}: {path} is a hard-coded uid {value!r}")
        for panel in panels_of(dashboard):
            where = f"{name}: panel {panel.get('title')!r}"
            if panel.get("datasource") != DATASOURCE:
                fail(f"{where}: datasource is {panel.get('datasource')}, expected {DATASOURCE}")
            for target in panel.get("targets", []):
                if target.get("datasource") != DATASOURCE:
                    fail(f"{where}: a target's datasource is not ${{datasource}}")
                unknown = unknown_metrics(target["expr"], contract, recorded)
                if unknown:
                    fail(f"{where}: {', '.join(unknown)} not in docs/metrics.md or the rules")
                named = target_labels(target["expr"] + " " + target.get("legendFormat", ""))
                if named:
                    fail(f"{where}: names the scrape's {', '.join(named)}, not weightedjob or "
                         f"job_namespace: {target['expr']}")
                count += 1
        for variable in variables:
            named = target_labels(variable.get("definition", ""))
            if named:
                fail(f"{name}: variable {variable['name']} names the scrape's {', '.join(named)}")
    # The check sees a wrong name (it is not vacuous).
    if not unknown_metrics("rate(ballast_node_no_such_total[1m])", contract, recorded):
        fail("an undocumented metric passed the name check")
    for old in ('ballast_job_items{namespace=~"$namespace",job=~"$job"}',
                "sum by (job, namespace) (ballast_job_items)", "{{job}}"):
        if not target_labels(old):
            fail(f"the scrape's labels passed the label check in {old}")
    if target_labels('sum by (weightedjob, job_namespace) (ballast_job_items{'
                     'job_namespace=~"$job_namespace",weightedjob=~"$weightedjob"}) '
                     '{{weightedjob}}'):
        fail("the label check refused weightedjob and job_namespace")
    ok(f"{count} queries of {len(dashboards)} dashboards use ${{datasource}}, no hard-coded uid, "
       "name only documented metrics, and no label of the scrape's")


def substitute(expr, span_s):
    for variable in ("$job_namespace", "$weightedjob", "$node"):
        expr = expr.replace(f'=~"{variable}"', '=~".*"')
    return (expr.replace("$__rate_interval", RATE_INTERVAL)
            .replace("$__range", f"{max(1, int(span_s))}s").replace("$__interval", "1s"))


class Prometheus:
    """Debian's prometheus on a loopback port, in a temporary directory."""

    def __init__(self, workdir, targets, rules):
        self.port = exposition.free_ports(1)
        self.url = f"http://127.0.0.1:{self.port}"
        config = os.path.join(workdir, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as handle:
            json.dump({
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [rules],
                # Without honor_labels (the default), as a shared Prometheus
                # scrapes: the series' weightedjob and job_namespace arrive as
                # exported, beside the target's job and instance.
                "scrape_configs": [{"job_name": "ballast", "honor_labels": False,
                                    "scrape_timeout": "900ms",
                                    "static_configs": [{"targets": targets}]}],
            }, handle)
        self.log = open(os.path.join(workdir, "prometheus.log"), "w", encoding="utf-8")
        self.process = subprocess.Popen(
            ["prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(workdir, 'data')}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while exposition.scrape(self.url + "/-/ready") is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                fail(f"prometheus did not become ready: {self.tail()}")
            time.sleep(0.2)

    def tail(self):
        self.log.flush()
        with open(self.log.name, encoding="utf-8") as handle:
            return handle.read()[-3000:]

    def api(self, path, params):
        url = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params, doseq=True)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.loads(response.read(exposition.MAX_SCRAPE_BYTES))
        except urllib.error.HTTPError as error:
            return json.loads(error.read(exposition.MAX_SCRAPE_BYTES) or b"{}")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


def has_value(result):
    return any(not math.isnan(float(value)) for series in result
               for _, value in series.get("values", []))


def check_live(prometheus, dashboards, start, end):
    """Every variable has values, every query parses and has data; returns the data."""
    data = {}
    absent = []
    for name, dashboard in dashboards.items():
        for variable in dashboard["templating"]["list"]:
            if variable.get("type") != "query":
                continue
            match = re.fullmatch(r"label_values\((.*), *(\w+)\)", variable["definition"])
            if not match:
                fail(f"{name}: variable {variable['name']}: not label_values(SELECTOR, LABEL)")
            selector = substitute(match.group(1), end - start)
            answer = prometheus.api(f"label/{match.group(2)}/values",
                                    {"match[]": selector, "start": start, "end": end})
            if answer.get("status") != "success" or not answer.get("data"):
                fail(f"{name}: variable {variable['name']} has no values: {answer}")
        for panel in panels_of(dashboard):
            for target in panel.get("targets", []):
                expr = substitute(target["expr"], end - start)
                where = f"{name}: panel {panel['title']!r} {target['refId']}"
                parsed = prometheus.api("query", {"query": expr, "time": end})
                if parsed.get("status") != "success":
                    fail(f"{where}: does not parse: {parsed.get('error')} in {expr}")
                answer = prometheus.api("query_range", {"query": expr, "start": start,
                                                        "end": end, "step": 1})
                result = answer.get("data", {}).get("result", [])
                if answer.get("status") != "success":
                    fail(f"{where}: {answer.get('error')} in {expr}")
                if not has_value(result):
                    named = set(METRIC_RE.findall(expr))
                    if not named or not named <= NO_DATA_IN_RUN.keys():
                        fail(f"{where}: no data over the run: {expr}")
                    absent.append(f"{where}: no data, as expected: "
                                  + "; ".join(NO_DATA_IN_RUN[m] for m in sorted(named)))
                data[(name, panel["id"], target["refId"])] = result
    # Regression: a query that does not parse is told apart.
    if prometheus.api("query", {"query": "rate(ballast_job_items[", "time": end}).get(
            "status") == "success":
        fail("a query that does not parse was accepted")
    ok(f"{len(data)} queries parse, {len(data) - len(absent)} return data from a real "
       "Prometheus over the run")
    for line in absent:
        ok(line)
    return data


def run_everything(args, dashboards, work):
    base = exposition.free_ports(6)
    # ballast run's coordinator and three workers, and the node probe.
    targets = [f"127.0.0.1:{base + i}" for i in range(4)] + [f"127.0.0.1:{base + 5}"]
    operator = None
    probe = None
    if args.namespace:
        targets.append(f"127.0.0.1:{base + 4}")
    prometheus = Prometheus(work, targets, os.path.join(args.source_dir, "prometheus",
                                                        "ballast-rules.yaml"))
    start = time.time()
    try:
        probe = start_probe(args, base + 5, work)
        if args.namespace:
            operator = start_operator(args, base + 4, work)
            # Scraped before it reconciles, so that the reconcile shows in a rate.
            await_samples(prometheus, "ballast_operator_leader", 3)
            apply_job(args.namespace)
        job = os.path.join(args.source_dir, "examples", "jobs", "primes-300000.yaml")
        if args.job_limit:
            with open(job, encoding="utf-8") as example:
                text = example.read()
            if "limit: 300000" not in text:
                fail(f"{job} sets no limit: 300000 for --job-limit to replace")
            job = os.path.join(work, "job.yaml")
            with open(job, "w", encoding="utf-8") as copy:
                copy.write(text.replace("limit: 300000", f"limit: {args.job_limit}"))
        job_log = os.path.join(work, "run.log")
        with open(job_log, "w", encoding="utf-8") as log:
            result = subprocess.run(
                [args.ballast, "run", job,
                 "--worker", args.worker, "--metrics-port", str(base), "--linger", "4",
                 "--no-cgroups", "--logs", work],
                stdout=log, stderr=subprocess.STDOUT, timeout=300, check=False)
        if result.returncode != 0:
            with open(job_log, encoding="utf-8") as log:
                fail(f"ballast run exited {result.returncode}: {log.read()[-3000:]}")
        ok(f"ballast run finished in {time.time() - start:.0f} s, scraped every second")
        time.sleep(2)  # the last scrapes and rule evaluations
        end = time.time()
        return check_live(prometheus, dashboards, start, end), start, end
    finally:
        for process in (operator, probe):
            if process:
                process.terminate()
                process.wait(timeout=30)
        prometheus.stop()


def start_probe(args, port, work):
    """The node probe on the tree of a Pi 4B that is under-voltage and throttled
    (tests/probe/trees/pi4b-8gb), as one of the run's boards: the cluster
    view's temperature and throttling panels read its gauges."""
    log = open(os.path.join(work, "probe.log"), "w", encoding="utf-8")
    process = subprocess.Popen(
        [args.worker, "probe", "--root",
         os.path.join(args.source_dir, "tests", "probe", "trees", "pi4b-8gb"), "--node",
         "pi4b-worker", "--interval", "1", "--metrics-listen", f"127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "ballast_node_soc_temperature_celsius" not in (exposition.scrape(
            f"http://127.0.0.1:{port}/metrics") or ""):
        if process.poll() is not None or time.monotonic() > deadline:
            fail(f"the probe serves no gauges (exit {process.poll()})")
        time.sleep(0.2)
    ok("the node probe serves a throttled Pi 4B's gauges")
    return process


def start_operator(args, port, work):
    if not os.environ.get("KUBECONFIG"):
        fail("--namespace needs KUBECONFIG (the test control plane's)")
    log = open(os.path.join(work, "operator.log"), "w", encoding="utf-8")
    process = subprocess.Popen(
        [args.ballast, "operator", "-n", args.namespace, "--metrics-listen", f"127.0.0.1:{port}",
         "--coordinator-listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "ballast_operator_leader 1" not in (exposition.scrape(
            f"http://127.0.0.1:{port}/metrics") or ""):
        if process.poll() is not None or time.monotonic() > deadline:
            fail(f"the operator did not lead (exit {process.poll()})")
        time.sleep(0.2)
    return process


def await_samples(prometheus, metric, count):
    """Waits until Prometheus holds `count` samples of `metric`."""
    deadline = time.monotonic() + 30
    query = f"count_over_time({metric}[1m]) >= {count}"
    while not prometheus.api("query", {"query": query}).get("data", {}).get("result"):
        if time.monotonic() > deadline:
            fail(f"prometheus has not scraped {metric} {count} times: {prometheus.tail()}")
        time.sleep(0.3)


def apply_job(namespace):
    """A suspended WeightedJob: the operator reconciles it once and waits."""
    job = ("apiVersion: ballast.io/v1alpha1\nkind: WeightedJob\n"
           "metadata: {name: dashboards}\n"
           "spec: {workload: {primes: {limit: 1000, method: trial}}, profile: raspberry-pi,"
           " suspend: true}\n")
    subprocess.run(["kubectl", "apply", "-n", namespace, "-f", "-"], input=job, text=True,
                   check=True, capture_output=True)
    ok("the operator leads and reconciles a WeightedJob")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--ballast", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--namespace", help="run the operator for this namespace")
    parser.add_argument("--render", help="draw each panel to PNG in this directory")
    parser.add_argument("--job-limit", type=int,
                        help="run the example job with this primes limit instead of 300000 "
                             "(the test: a shorter run that every panel still draws from)")
    args = parser.parse_args()
    if not shutil.which("prometheus"):
        fail("prometheus is missing (Debian package prometheus; scripts/install-deps)")
    dashboards = load_dashboards(os.path.join(args.source_dir, "helm", "ballast", "files",
                                              "dashboards"))
    contract = exposition.read_contract(os.path.join(args.source_dir, "docs", "metrics.md"))
    recorded = recorded_names(os.path.join(args.source_dir, "prometheus", "ballast-rules.yaml"))
    check_static(dashboards, contract, recorded)
    with tempfile.TemporaryDirectory() as work:
        data, start, end = run_everything(args, dashboards, work)
    if args.render:
        import render_panels  # noqa: E402  (matplotlib only when drawing)
        empty = render_panels.render(dashboards, data, start, end, args.render)
        ok(f"panels drawn into {args.render}"
           + (f"; not drawn, no data: {', '.join(empty)}" if empty else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
