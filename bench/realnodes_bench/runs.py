"""One run of each kind, timed alike: the oracle's pods, a WeightedJob, an
Indexed Job. Each is timed from `kubectl apply` returning to the finish
seen on a watch of the API (pod start included), split where the time
went (timing.py), its boards', operator's and control plane's CPU read
before and after, its result read and checked, its outputs compared."""
import json
import re

from . import timing
from .cluster import note, now, warn


def timed(bench, selector, apply, wait, init_is_work=False):
    """Runs apply() then wait(watch) with the pods of `selector` watched and
    the boards' CPU sampled. Returns the run's figures so far and the CPU
    counters read before it."""
    c = bench.cluster
    watch = c.watch_pods(selector)
    before = c.counters()
    sampler = c.sampler()
    start = now()
    apply()
    wait(watch)
    end = now()
    at_end = c.boards_cpu()
    samples = sampler.stop()
    seen = watch.stop()
    first, every, per_board = timing.pods_start(seen, start, c.boards)
    spans = {b: timing.busy_span(samples[b], bench.speeds[b]) for b in c.boards}
    parts = timing.phases(start, end, spans, c.boards)
    init = cstart = None
    if not init_is_work:
        init, cstart = timing.pod_start_parts(per_board, timing.last_to_compute(spans, c.boards))
    figures = {"makespan": end - start, "first_pod": first, "all_pods": every,
               "init": init, "cstart": cstart, "boards_at_end": at_end, **parts}
    events = c.get("events", "--field-selector", "involvedObject.kind=Pod")["items"]
    figures["authorizer"] = timing.authorizer_refused(events, {s.name for s in seen})
    return figures, before, seen


def finish(bench, figures, before):
    """The CPU the run cost, once its pods are gone: the boards', the
    control-plane node's pods' (the operator) and the control plane's."""
    after = bench.cluster.counters()
    figures["boards_cpu"] = after["boards"] - before["boards"]
    # What the boards spent after the end was seen: copies still running
    # until their pods went, the pods' teardown.
    figures["after_end"] = after["boards"] - figures.pop("boards_at_end")
    figures["operator_cpu"] = after["operator"] - before["operator"]
    figures["control_cpu"] = after["control plane"] - before["control plane"]
    figures["busy"] = figures["boards_cpu"] / (bench.total_speed * figures["makespan"])
    return figures


def oracle_run(bench, workload, lists, round_, when):
    """The oracle's split: one plain pod a board doing its list, all applied
    at once, no scheduler between them."""
    c = bench.cluster
    bench.oracle_label = f"bench-o{round_}-{when}"
    pods = [workload.oracle_pod(f"{bench.oracle_label}-{board}", board, lists[board])
            for board in c.boards if lists[board]]
    selector = f"bench-oracle={bench.oracle_label}"
    figures, before, seen = timed(bench, selector, lambda: c.apply(*pods),
                                  lambda watch: watch.wait_ended(len(pods)),
                                  init_is_work=workload.name == "primes")
    ended = c.get("pods", "-l", selector)["items"]
    if bench.options.keep:
        keep_pods(bench, workload, bench.oracle_label, selector, seen)
    failed = [p["metadata"]["name"] for p in ended if p["status"].get("phase") != "Succeeded"]
    if failed:
        warn(f"{workload.name} oracle {bench.oracle_label}: pods failed: {failed}")
    figures["result"] = workload.oracle_result(ended)
    c.delete("pods", "-l", selector)
    c.wait_gone(selector)
    workload.check(bench.oracle_label)
    return finish(bench, figures, before)


def workers_cpu(bench, name):
    """Whose CPU it was: each worker says at its end what it spent itself
    and what its commands spent (its log's "job done" line). Returns (own,
    commands, how many said) or None when none did (a failed job's worker
    pods are deleted as it fails)."""
    c = bench.cluster
    own = commands = 0.0
    said = 0
    for pod in c.kubectl_ns("get", "pods", "-l", f"ballast.io/job={name}", "-o",
                            "name").split():
        log = c.kubectl_ns("logs", pod, "--all-containers", check=False)
        line = next((l for l in log.splitlines() if " job done job=" in l), None)
        if line:
            said += 1
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            own += float(fields.get("cpu_self_s", 0))
            commands += float(fields.get("cpu_commands_s", 0))
    return (own, commands, said) if said else None


def keep_weighted(bench, workload, name):
    """With --keep: the job's status and events, its workers' logs, and the
    coordinator's decisions (the operator runs --verbose)."""
    c, keep = bench.cluster, bench.options.keep / workload.name
    keep.mkdir(parents=True, exist_ok=True)
    (keep / f"{name}.json").write_text(c.kubectl_ns("get", "weightedjob", name, "-o", "json"))
    (keep / f"{name}.events").write_text(c.kubectl_ns(
        "get", "events", "--field-selector", f"involvedObject.name={name}", check=False))
    for pod in c.kubectl_ns("get", "pods", "-l", f"ballast.io/job={name}", "-o", "name").split():
        (keep / f"{name}-{pod.split('/', 1)[1]}.log").write_text(
            c.kubectl_ns("logs", pod, "--all-containers", check=False))
    operator = c.kubectl_ns("logs", "-l", "app.kubernetes.io/component=operator", "--tail=-1",
                            check=False)
    pattern = re.compile(rf"job={re.escape(c.ns)}\.{re.escape(name)}( |$)")
    (keep / f"{name}.decisions.log").write_text(
        "".join(l + "\n" for l in operator.splitlines() if pattern.search(l)))


def keep_pods(bench, workload, name, selector, seen):
    """With --keep: a run's pods, their events (a start that waited shows
    there) and what the watch saw of them."""
    c, keep = bench.cluster, bench.options.keep / workload.name
    keep.mkdir(parents=True, exist_ok=True)
    (keep / f"{name}.pods").write_text(c.kubectl_ns("get", "pods", "-l", selector, "-o", "wide"))
    names = {s.name for s in seen}
    events = c.get("events", "--field-selector", "involvedObject.kind=Pod")["items"]
    (keep / f"{name}.pod-events").write_text("".join(
        f"{e.get('lastTimestamp') or e.get('eventTime')} {e['involvedObject']['name']} "
        f"{e.get('reason')}: {e.get('message')}\n"
        for e in events if e["involvedObject"]["name"] in names))
    (keep / f"{name}.watch").write_text("".join(
        f"{s.t:.3f} {s.name} {s.node} {s.phase}{' initialized' if s.initialized else ''}"
        f"{' running' if s.running else ''}\n" for s in seen))


def weighted_run(bench, workload, round_, corrupt=False):
    """One WeightedJob (adaptive), as the example ships it."""
    c = bench.cluster
    name = f"bench-w{round_}" + ("-corrupt" if corrupt else "")
    job = workload.weighted(name, corrupt)
    selector = f"ballast.io/job={name}"
    figures, before, seen = timed(
        bench, selector, lambda: c.apply(job),
        lambda watch: c.wait_for("weightedjob", name, "{.status.phase}", "^(Succeeded|Failed)$"))
    status = c.get("weightedjob", name)
    figures["result"] = workload.weighted_result(status)
    status = status.get("status") or {}
    if corrupt:
        failures = ((status.get("result") or {}).get("exec") or {}).get("failures") or []
        figures["attempts"] = ",".join(str(f.get("attempts")) for f in failures)
    # Each healthy board judged against its own baseline (docs/history.md):
    # a "slow" here is a false alarm.
    nodes = status.get("nodes") or []
    note(f"    {name}, each board against its baseline: " + "; ".join(
        f"{n.get('name')} {n.get('baselineVerdict', 'no baseline yet')} "
        f"{n.get('baselineRatio', '')}".rstrip() for n in nodes))
    c.kubectl_ns("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod", "-l", selector,
                 "--timeout=15s", check=False)
    # Busy seconds on copies another worker handed in first, or still under
    # way at the end, as CPU seconds: a worker computes at its board's cores.
    busy_lost = {n.get("name"): float(n.get("duplicateSeconds") or 0) for n in nodes}
    figures["lost"] = sum(s * bench.speeds.get(b, 0) for b, s in busy_lost.items())
    lost = (f"copies that lost: busy {sum(busy_lost.values()):.2f} s, "
            f"{figures['lost']:.2f} CPU s")
    cpu = workers_cpu(bench, name)
    if cpu and cpu[2] == len(c.boards):
        figures["own"], figures["commands"] = cpu[0], cpu[1]
        note(f"    {name}, the workers' own CPU {cpu[0]:.2f} s, their commands' {cpu[1]:.2f} s "
             f"({cpu[2]} of {len(c.boards)} workers said); {lost}")
    elif cpu:
        # A partial sum would read as the job's whole: not kept for the table.
        note(f"    {name}, only {cpu[2]} of {len(c.boards)} workers' logs said their CPU (a failed "
             f"job's worker pods are deleted as it fails), so none is counted: theirs "
             f"{cpu[0]:.2f} s own, {cpu[1]:.2f} s commands; {lost}")
    else:
        note(f"    {name}, no worker's log said its CPU (a failed job's worker pods are deleted "
             f"as it fails); {lost}")
    if bench.options.keep:
        keep_weighted(bench, workload, name)
        keep_pods(bench, workload, name, selector, seen)
    c.delete("weightedjob", name)
    # An endgame copy that lost may still run when the job says Succeeded,
    # until its worker's next heartbeat or its pod's deletion ends it: the
    # outputs are checked, and the CPU read, once every pod is gone.
    c.wait_gone(selector)
    workload.check(name)
    return finish(bench, figures, before)


def indexed_messages(pods):
    """Each index's result once: its pod that succeeded, else its last
    attempt's termination message."""
    best = {}
    for pod in pods:
        index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        statuses = pod["status"].get("containerStatuses") or [{}]
        state = (statuses[0].get("state") or {}).get("terminated") or {}
        key = (pod["status"].get("phase") == "Succeeded", pod["metadata"]["creationTimestamp"])
        if index not in best or key > best[index][0]:
            best[index] = (key, state.get("message", ""))
    return [message for _, message in best.values()]


def indexed_run(bench, workload, round_, variant, corrupt=False):
    """One Indexed Job SPLIT:COMPLETIONS:PER_NODE; with `corrupt` the bad
    input in one bin, each index retried twice as backoffLimitPerIndex
    allows."""
    c = bench.cluster
    split, completions, per_node = variant.split(":")
    name = f"bench-i{round_}-{split}-{completions}-{per_node}" + ("-corrupt" if corrupt else "")
    pod_spec = workload.indexed(split, int(completions), bench.request(int(per_node)), corrupt)
    limits = {"backoffLimitPerIndex": 2} if corrupt else {"backoffLimit": 0}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"completionMode": "Indexed", "completions": int(completions),
                    "parallelism": len(c.boards) * int(per_node), **limits,
                    "template": {"spec": {"restartPolicy": "Never", "nodeSelector":
                                          {"ballast.io/pool": "seed000"},
                                          "securityContext": {
                                              "runAsNonRoot": True, "runAsUser": 65532,
                                              "seccompProfile": {"type": "RuntimeDefault"}},
                                          **pod_spec}}}}
    selector = f"job-name={name}"
    figures, before, seen = timed(
        bench, selector, lambda: c.apply(job),
        lambda watch: c.wait_for("job", name, '{.status.conditions[?(@.status=="True")].type}',
                                 "(Complete|Failed)"))
    pods = c.get("pods", "-l", selector)["items"]
    figures["result"] = workload.indexed_result(indexed_messages(pods))
    if bench.options.keep:
        keep_pods(bench, workload, name, selector, seen)
        (bench.options.keep / workload.name / f"{name}.template").write_text(
            json.dumps(pod_spec, indent=2) + "\n")
    status = c.get("job", name).get("status") or {}
    if corrupt:
        figures["failed"] = status.get("failedIndexes", "")
    elif status.get("failed"):
        failed = [p["metadata"]["name"] for p in pods if p["status"].get("phase") == "Failed"]
        tail = c.kubectl_ns("logs", failed[0], check=False).splitlines()[-3:] if failed else []
        warn(f"{name}: a pod failed ({failed[:1]}): {' '.join(tail)}")
    c.kubectl_ns("delete", "job", name, "--cascade=foreground", "--wait=true", check=False)
    c.wait_gone(selector)
    workload.check(name)
    return finish(bench, figures, before)


def pull_start_run(bench, workload, name):
    """One WeightedJob of --pull-start, its start timed: apply -> the first
    pod Running, -> every board's first pod Running (the end when a board
    never ran one), the job's end; and what each board's kubelet said of
    its image (its Pulled events: pulled in how long, or present)."""
    c = bench.cluster
    selector = f"ballast.io/job={name}"
    watch = c.watch_pods(selector)
    start = now()
    c.apply(workload.weighted(name))
    phase = c.wait_for("weightedjob", name, "{.status.phase}", "^(Succeeded|Failed)$")
    end = now()
    first, every, _ = timing.pods_start(watch.stop(), start, c.boards)
    events = c.get("events", "--field-selector", "reason=Pulled")["items"]
    pulls = [timing.pulled_text(e.get("message") or "") for e in events
             if e["involvedObject"]["name"].startswith(f"{name}-")]
    c.delete("weightedjob", name)
    c.wait_gone(selector)
    took = end - start
    return {"took": took, "first": took if first is None else first,
            "every": took if every is None else every, "phase": phase, "pulls": pulls}
