#!/usr/bin/env python3
"""The metrics contract (docs/metrics.md) against real processes, both ways.

  metrics_contract.py local BALLAST WORKER JOB.yaml DOCS/metrics.md
      runs `ballast run JOB --metrics-port P --linger 3`, scrapes the
      coordinator and every worker while the job runs and after it finished,
      checks each endpoint's last scrape with `promtool check metrics`, and
      compares the ballast_* families seen with the coordinator's and the
      worker's rows.
  metrics_contract.py operator BALLAST DOCS/metrics.md NAMESPACE JOB.yaml
      runs `ballast operator -n NAMESPACE --metrics-listen` against the API
      server of $KUBECONFIG, applies JOB.yaml once it leads, scrapes its port
      until the job's finish is served, checks that the job's
      ballast_job_efficiency carries its status' efficiency and reference,
      and compares what it served with the operator's and the coordinator's
      rows.

Prints one line per check and exits non-zero at the first failure.
"""

import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exposition  # noqa: E402

DEADLINE_S = 120


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def ok(message):
    print(f"ok: {message}")


def promtool_check(text, what):
    result = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                            capture_output=True, check=False)
    if result.returncode != 0:
        fail(f"promtool check metrics on {what}: {result.stdout}{result.stderr}")
    ok(f"promtool check metrics: {what}")


def merge(seen, text, source):
    for name, family in exposition.parse_exposition(text, source).items():
        if name in seen:
            seen[name].labels |= family.labels
        else:
            seen[name] = family


def check_contract(docs, seen, exporters, optional=frozenset()):
    contract = exposition.read_contract(docs)
    for name in optional - set(seen):
        print(f"note: {name} was not seen (checked by the local run)")
        contract.pop(name, None)
    problems = exposition.compare(contract, seen, exporters)
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        sys.exit(1)
    count = sum(1 for name in seen if name.startswith("ballast_"))
    ok(f"{count} ballast_* families of {'+'.join(exporters)} match docs/metrics.md both ways")


def unknown_job_refused(coordinator):
    """Asks the coordinator for a job it does not have; True when it answered 404."""
    try:
        urllib.request.urlopen(f"{coordinator}/v1/jobs/no-such-job", timeout=2)
    except urllib.error.HTTPError as error:
        return error.code == 404
    except OSError:
        return False
    return False


def run_local(ballast, worker, job, docs):
    nodes = 3  # the built-in cluster's
    base = exposition.free_ports(nodes + 1)
    urls = [f"http://127.0.0.1:{base + i}/metrics" for i in range(nodes + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        process = subprocess.Popen(
            [ballast, "run", job, "--worker", worker, "--metrics-port", str(base), "--linger",
             "3", "--no-cgroups", "-o", "json", "--logs", tmp],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen, last = {}, {}
        deadline = time.monotonic() + DEADLINE_S
        refused = False
        while process.poll() is None and time.monotonic() < deadline:
            # A request for a job that does not exist: counted in
            # ballast_coordinator_refused_total{reason="unknown_job"}.
            refused = refused or unknown_job_refused(f"http://127.0.0.1:{base}")
            for index, url in enumerate(urls):
                text = exposition.scrape(url)
                if text is not None:
                    merge(seen, text, url)
                    last[index] = text
            time.sleep(0.2)
        if process.poll() is None:
            process.kill()
            fail(f"ballast run did not end in {DEADLINE_S} s")
        output = process.stdout.read()
        if process.returncode != 0:
            fail(f"ballast run exited {process.returncode}: {output}")
    if not refused:
        fail("the coordinator never refused the request for an unknown job")
    ok("ballast run finished, its endpoints scraped")
    for index in range(nodes + 1):
        if index not in last:
            fail(f"{urls[index]} never answered")
        promtool_check(last[index], "coordinator" if index == 0 else f"worker {index}")
    check_contract(docs, seen, ["coordinator", "worker"])


def run_operator(ballast, docs, namespace, job):
    if not os.environ.get("KUBECONFIG"):
        fail("KUBECONFIG is not set (the test control plane's)")
    base = exposition.free_ports(3)
    url = f"http://127.0.0.1:{base}/metrics"
    with tempfile.TemporaryDirectory() as tmp:
        log_path = os.path.join(tmp, "operator.log")
        with open(log_path, "w", encoding="utf-8") as log:
            process = subprocess.Popen(
                [ballast, "operator", "-n", namespace, "--metrics-listen", f"127.0.0.1:{base}",
                 "--coordinator-listen", f"127.0.0.1:{base + 1}", "--health-listen",
                 f"127.0.0.1:{base + 2}", "--worker-image", "ballast-worker:dev"],
                stdout=log, stderr=subprocess.STDOUT)
        try:
            seen, text = scrape_operator(process, url, f"http://127.0.0.1:{base + 1}", log_path,
                                         namespace, job)
        finally:
            process.terminate()
            process.wait(timeout=30)
    promtool_check(text, "operator")
    check_efficiency(text, namespace, job)
    # The operator forgets a finished job as soon as its pods are gone, so a
    # scrape rarely catches the finish, nor, for a short job, its first
    # report; `local` checks those families. The one job has no history to
    # be judged against: no ballast_node_baseline_ratio (efficiency_metrics_test).
    check_contract(docs, seen, ["operator", "coordinator"],
                   optional={"ballast_job_finished_timestamp_seconds",
                             "ballast_job_first_report_timestamp_seconds",
                             "ballast_node_baseline_ratio"})


def check_efficiency(text, namespace, job):
    """The finished job's ballast_job_efficiency in `text` equals its status'."""
    status = subprocess.run(
        ["kubectl", "get", "-n", namespace, "-f", job, "-o",
         "jsonpath={.metadata.name} {.status.efficiency} {.status.efficiencyReference}"],
        capture_output=True, text=True, check=True).stdout.strip()
    name, efficiency, reference = status.split(" ", 2)
    want = {"weightedjob": name, "job_namespace": namespace, "workload": "primes",
            "reference": reference}
    values = [value for labels, value in exposition.samples(text, "ballast_job_efficiency")
              if labels == want]
    if len(values) != 1:
        fail(f"expected one ballast_job_efficiency{want}, got {len(values)} in:\n"
             + "\n".join(line for line in text.splitlines() if "efficiency" in line))
    if not math.isclose(values[0], float(efficiency), rel_tol=1e-12):
        fail(f"ballast_job_efficiency is {values[0]}, status.efficiency {efficiency}")
    ok(f"ballast_job_efficiency {values[0]} against {reference!r} equals the job's status")


def scrape_operator(process, url, coordinator, log_path, namespace, job):
    """Scrapes until the job Succeeded and its efficiency is served; returns
    (families, last scrape)."""
    seen, text, applied, phase = {}, None, False, ""
    deadline = time.monotonic() + DEADLINE_S
    while (phase != "Succeeded" or "ballast_job_items" not in seen
           or "ballast_job_efficiency" not in exposition.parse_exposition(text or "")):
        if process.poll() is not None or time.monotonic() > deadline:
            with open(log_path, encoding="utf-8") as log:
                fail(f"the job did not succeed with its series served in {DEADLINE_S} s "
                     f"(phase {phase!r}, operator exit {process.poll()}): {log.read()[-3000:]}")
        scraped = exposition.scrape(url)
        if scraped is not None:
            text = scraped
            merge(seen, text, url)
        if not applied and "ballast_operator_leader" in seen:
            subprocess.run(["kubectl", "apply", "-n", namespace, "-f", job], check=True,
                           capture_output=True)
            applied = True
        if applied and "ballast_coordinator_refused_total" not in seen:
            unknown_job_refused(coordinator)
        if applied:
            phase = subprocess.run(
                ["kubectl", "get", "-n", namespace, "-f", job, "-o",
                 "jsonpath={.status.phase}"], capture_output=True, text=True,
                check=False).stdout.strip()
        time.sleep(0.2)
    ok("the operator ran the job to Succeeded; its port scraped meanwhile")
    return seen, text


def main(argv):
    if len(argv) == 6 and argv[1] == "local":
        run_local(*argv[2:])
    elif len(argv) == 6 and argv[1] == "operator":
        run_operator(*argv[2:])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
