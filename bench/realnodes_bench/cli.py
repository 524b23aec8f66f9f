"""A WeightedJob beside a well-tuned Kubernetes Indexed Job and an oracle's
split, on real container nodes (seed 000's three boards as real kubelets,
each held to its speed by a CPU quota; docs/testenv.md, "Real nodes"), all
running the same program from the same image on the same items, timed the
same way: from `kubectl apply` returning to the finish seen on a watch of
the API (pod start included). Every result is checked exact.

The reference is an oracle that knows every item's cost, run in the same
round as the schedulers it judges:
  calibration  one pod without a CPU quota (on the control-plane node) does
               every item one at a time; each item's CPU seconds on one core
               (its shell's `times`; primes: equal shares of the job's known
               cost, each timed as the worker's own process here) are the
               items' true costs, their sum the work W, and its outputs the
               reference every run is checked against.
  oracle       the items dealt largest first, each to the board that would
               finish it earliest at its speed (its quota: the node's
               emulated speed), one plain pod a board doing its list (the
               same image, security context and volume as the job's pods;
               primes: its shares in init containers one after another), all
               applied at once; its makespan, apply to the last pod done, is
               the reference.
  bracket      each round runs the oracle before the WeightedJob, between
               it and the Indexed Jobs, and after them, so that every run
               lies between two oracle runs a few minutes apart at most (the
               bed's speed wanders by more over a whole round); a run's
               reference is the mean of the two either side of it. A round
               whose two around the WeightedJob differ by more than 5 % is
               discarded and named; where the two around the Indexed Jobs
               do, their ratios are left out of that round.
  paired       each run's makespan over its own reference (/oracle) and
               over its own round's WeightedJob (vs WJ): minimum and median
               over the kept rounds, never a ratio of medians.
  lower bound  what indivisible items impose on any split: the largest of
               W over the summed speeds and, for every k, the k largest
               items over the k fastest boards.
The one-core limit (W over the boards' summed speeds) and efficiency =
limit / makespan stay as information.

A second table says where each run's time and CPU went: apply -> every
board computing (a board computes while its pods' cgroup uses half its
quota or more, sampled four times a second), of it the last board's pod
from bound to initialized (sandbox, init containers) and to its container
running, as the pod's status said; computing until the first board is idle
for good; the tail until the last board is done; the boards' CPU seconds
(their pods' cgroups) and of it those after the end was seen, beside the
work's; the WeightedJob's workers' commands' and own CPU (each worker's
"job done" line) and busy seconds on copies that lost; the control-plane
node's pods' CPU (the operator) and the control plane's processes' (API
server, datastore, controller-manager, scheduler, DNS, that node's kubelet
and containerd).

Six workloads (--workload, comma-separated; the default all six):
  primes      primes below --limit by trial division, in the ballast-worker
              image (`ballast-worker slice` for the Indexed Job: share
              JOB_COMPLETION_INDEX of N, its result in the termination
              message). Items grow dearer along the range.
  thumbnails  examples/thumbnails: ImageMagick thumbnails of --photos PNG
              images of Pareto sizes (make-photos --scale), one convert
              thread each (MAGICK_THREAD_LIMIT=1, in every run and in the
              calibration).
  recompress  examples/recompress: gzip archives of --megabytes MB (before
              compression) of Pareto sizes, text and noise, recompressed as
              zstd -19 by a shell script; the archives' sizes, the declared
              costs, are off from the real cost by up to five times.
  anomalies   examples/anomalies: a Python script run once per item
              (perItem: each item pays the interpreter's start) over CSV
              time series of --points points in all, Pareto lengths; a
              quarter of the files carry a label that triples their size,
              the declared cost, for the same work.
  testsuite   examples/testsuite: a project's pytest suite, 60 tests of
              Pareto costs (about --suite-seconds CPU s on one core, by its
              maker's reckoning), one pytest process a run; the declared
              costs are the durations its CI recorded (pytest-split's
              .test_durations, by the example's shard-list): on another
              machine whose speed differs by kind of work, noisy, some tests
              changed since and new ones given the mean. Nothing was tuned
              on it. Its result is the tests passed and the cases they
              checked, exact.
  compile     examples/compile: a tree of C sources of --kilobytes KB,
              Pareto sizes, each compiled by cc -O2 -c in a shell script;
              a file is loops, switches or tables, whose kilobyte compiles
              up to twenty times faster, so its size, the declared cost, is
              a poor guess. Nothing was tuned on it; its result is the
              objects made and their bytes, exact.
The last five run in the user's image built from the example's
Containerfile (Debian packages, nothing of Ballast's), the example's job as
it ships, on a PersistentVolume every board mounts; items are the files,
their sizes the costs (testsuite: the tests, their past durations the costs).

recompress, anomalies, testsuite and compile end with a corrupt round
(--no-corrupt skips it): their maker adds one bad input (a truncated
archive; a series with a value that is not a number; a test that fails; a
source with a syntax error), and the WeightedJob
as the example ships it and the best Indexed Job tuning
(backoffLimitPerIndex 2: the same three attempts) run once more with it
among the items; each is compared with its clean runs and with what one
attempt at the bad input costs.

The Indexed Job gets the tuning a strong user would give it. Each variant is
SPLIT:COMPLETIONS:PER_NODE (--indexed, comma-separated):
  SPLIT     count: equal numbers of items (primes only: the naive cut);
            cost: equal shares of the known cost (primes: `slice --split
            cost` by the job's cost model; the others: items packed by
            declared cost (size; testsuite: past duration) into COMPLETIONS
            bins, largest first, each into the lightest)
  PER_NODE  pods of the Job that fit on one board at a time (its CPU request
            is sized so): parallelism = boards x PER_NODE

The worker image's pull in a job's start (--pull-start N): a small primes
WeightedJob (below --limit, default 200000 in this mode) run N times with
the worker image removed from every board first, so each board pulls it
from the bed's registry (cold: the download and the unpacking), and N times
with it present, interleaved; prints apply -> the first pod Running -> every
board's first pod Running for each, their medians and the image's compressed
size, imports the worker's archive on every board again (the bed imports
each archive once into the boards' kept containerd roots), and stops (about
3 minutes for N = 3). The chart's node probe is off
in this mode: its DaemonSet runs the worker image on every node, which pulls
it at install and keeps its layers in use.

The node authorizer's race: a kubelet that asks for a new pod's claim,
ConfigMap or Secret before the API server's graph of pods and nodes has
taken in that pod is refused, and retries the pod about 10 s later (upstream
kubernetes/kubernetes#113429). On this two-core bed it lands on any run at
random, the oracle's too. So the bench lets the boards read those objects of
its namespace by RBAC as well (a Role and ClusterRole bound to system:nodes,
the bed's alone): no run waits for it. --authorizer-race leaves the grant
out; either way a run line names the pods whose start it refused.

Starts its own real-node cluster, builds the amd64 images and the example's
images if missing, installs the chart, stops everything at the end. Figures
only: it never fails on speed. Takes hours with the defaults (three rounds
of all six workloads).

  bench/realnodes-bench                                  # all six workloads, 3 rounds
  bench/realnodes-bench --workload recompress,anomalies  # the two in users' scripts
  bench/realnodes-bench --workload thumbnails --repeat 1
  bench/realnodes-bench --workload primes --indexed count:30:1,cost:30:1
  bench/realnodes-bench --pull-start 3                   # cold pull vs image present, the start only
  bench/realnodes-bench --workload recompress --keep DIR # each WeightedJob's status, events, logs in DIR,
    and the coordinator's decisions (the operator runs --verbose: a line per report and its answer),
    every run's pods, their events and watch, each item's calibrated CPU and oracle's board, and
    DIR/WORKLOAD/rounds.json, written after every round: the figures of the rounds run so far
  bench/realnodes-bench --pool DIR1 DIR2 --kept 3        # the tables over the rounds of two runs
    kept with --keep, as if one run had run them all (no nodes, no root needed): a round's
    figures depend on no other round's, so rounds of runs of the same code pool; each run's
    commit is printed, and a warning when they differ
"""
import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

from . import cluster, figures, pool, report, runs, workloads
from .cluster import Cluster, bed_env, run, warn

WORKLOADS = ["primes", "thumbnails", "recompress", "anomalies", "testsuite", "compile"]
INDEXED = {
    "primes": ["count:3:1", "count:30:1", "cost:3:1", "cost:30:1", "cost:30:2"],
    "thumbnails": ["cost:3:1", "cost:12:1", "cost:48:1", "cost:48:2"],
    "recompress": ["cost:3:1", "cost:12:1", "cost:24:2", "cost:48:2"],
    "anomalies": ["cost:3:1", "cost:12:1", "cost:24:2", "cost:48:2"],
    "testsuite": ["cost:3:1", "cost:12:1", "cost:24:2", "cost:48:2"],
    "compile": ["cost:3:1", "cost:12:1", "cost:24:2", "cost:48:2"],
}
VARIANT = re.compile(r"^(count|cost):[1-9][0-9]*:[1-9]$")

# The exit status when a workload kept fewer rounds than --kept asks: its
# figures are printed, but they do not meet the aim the run was given.
EXIT_SHORT_OF_KEPT = 3


def parse(argv):
    """The options; exits 2 with a message on a bad one."""
    parser = argparse.ArgumentParser(
        prog="realnodes-bench", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="all",
                        help="comma-separated, of " + ", ".join(WORKLOADS) + " or all")
    parser.add_argument("--limit", type=int,
                        help="primes below (1000000; 200000 with --pull-start)")
    parser.add_argument("--photos", type=int, default=800, help="thumbnails' images (800)")
    parser.add_argument("--scale", type=float, default=4, help="their make-photos --scale (4)")
    parser.add_argument("--megabytes", type=int, default=160,
                        help="recompress's archives before compression (160)")
    parser.add_argument("--points", type=int, default=1800000, help="anomalies' points (1800000)")
    parser.add_argument("--suite-seconds", type=float, default=80,
                        help="testsuite's CPU seconds, by its maker's reckoning (80)")
    parser.add_argument("--kilobytes", type=float, default=5000,
                        help="compile's C sources (5000)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds, interleaved (3); with --kept, the most rounds run")
    parser.add_argument("--kept", type=int, metavar="N",
                        help="stop once N rounds are kept (their oracle's bracket within 5 %%), "
                             "or after --repeat rounds, whichever comes first; the exit status "
                             f"is {EXIT_SHORT_OF_KEPT} when a workload kept fewer")
    parser.add_argument("--no-corrupt", action="store_true", help="no corrupt round")
    parser.add_argument("--keep", type=pathlib.Path, metavar="DIR",
                        help="each run's status, events, logs and decisions in DIR")
    parser.add_argument("--indexed", metavar="VARIANTS",
                        help="the Indexed Job's tunings, SPLIT:COMPLETIONS:PER_NODE,...")
    parser.add_argument("--authorizer-race", action="store_true",
                        help="leave the boards' reads of a pod's claim, ConfigMaps and "
                             "Secrets to the node authorizer alone (see above)")
    parser.add_argument("--pull-start", metavar="N",
                        help="only the worker image's pull in a job's start: N cold, N warm")
    parser.add_argument("--pool", nargs="+", type=pathlib.Path, metavar="PATH",
                        help="no runs: the tables over the rounds of earlier runs' rounds.json "
                             "(a file, or a --keep DIR), pooled per workload")
    options = parser.parse_args(argv)
    names = WORKLOADS if options.workload == "all" else options.workload.split(",")
    for name in names:
        if name not in WORKLOADS:
            parser.exit(2, f"realnodes-bench: --workload takes {' '.join(WORKLOADS)} or all "
                           f"(comma-separated), not {name}\n")
    options.workloads = names
    options.variants = options.indexed.split(",") if options.indexed else []
    for variant in options.variants:
        if not VARIANT.match(variant):
            parser.exit(2, "realnodes-bench: --indexed takes SPLIT:COMPLETIONS:PER_NODE, "
                           f"e.g. cost:30:1, not {variant}\n")
    if options.pull_start is None:
        options.pull_start = 0
    elif re.fullmatch(r"[1-9][0-9]*", options.pull_start):
        options.pull_start = int(options.pull_start)
    else:
        parser.exit(2, f"realnodes-bench: --pull-start takes a count of runs, "
                       f"not {options.pull_start}\n")
    if options.limit is None:
        options.limit = 200000 if options.pull_start else 1000000
    if options.repeat < 1:
        parser.exit(2, "realnodes-bench: --repeat takes 1 or more\n")
    if options.kept is not None and (options.kept < 1 or (
            not options.pool and options.kept > options.repeat)):
        parser.exit(2, f"realnodes-bench: --kept takes 1 to --repeat ({options.repeat}), "
                       f"not {options.kept}\n")
    if options.keep:
        options.keep = options.keep.resolve()
    return options


class Bench:
    """What every run needs: the options, the cluster, the boards' speeds."""

    def __init__(self, root, options):
        self.root = root
        self.options = options
        self.build = root / os.environ.get("BALLAST_BUILD_DIR", "build")
        self.testenv = pathlib.Path(os.environ.setdefault("BALLAST_TESTENV_DIR",
                                                          "/tmp/ballast-realnodes-bench"))
        os.environ.setdefault("BALLAST_TESTENV_PORT_BASE", "26900")
        self.nodes_file = os.environ.get("BALLAST_REAL_NODES",
                                         str(root / "tests/testenv/nodes/seed000-real.yaml"))
        self.ns = "realnodes-bench"
        chart = (root / "helm/ballast/Chart.yaml").read_text()
        self.version = re.search(r'^appVersion: *"?([^"\n]*)"?$', chart, re.M).group(1)
        self.cache = pathlib.Path(os.environ.get("BALLAST_CACHE", "/var/cache/ballast"))
        self.work = pathlib.Path(f"{self.testenv}-work")
        self.cluster = None
        self.worker_image = ""  # the bed registry's, once it is up
        self.speeds = {}
        self.total_speed = 0.0
        self.cpus = 1
        self.oracle_label = ""
        self.commit = commit_of(root)
        self.started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())

    def request(self, per_node):
        return figures.cpu_request(self.cpus, per_node)

    def start(self):
        if "primes" in self.options.workloads and not self.options.pull_start:
            # primes' calibration runs the worker here.
            run(["cmake", "--build", str(self.build), "--target", "ballast-worker"], cwd=self.root)
        images = self.cache / "images" / self.version
        if not list(images.glob(f"ballast-worker-{self.version}-amd64.tar")):
            print("realnodes-bench: building the amd64 images (scripts/images --arch amd64)")
            run(["scripts/images", "--arch", "amd64"], cwd=self.root)
        subprocess.run(["rm", "-rf", str(self.work)])
        self.work.mkdir(parents=True)
        t0 = time.time()
        run(["scripts/testenv-up", "--real-nodes", self.nodes_file], cwd=self.root)
        c = self.cluster = Cluster(self.root, self.testenv, self.ns, bed_env(self.testenv))
        # The boards: the nodes of seed 000's pool (server-0 holds the operator).
        c.boards = c.kubectl("get", "nodes", "-l", "ballast.io/pool=seed000", "-o",
                             "jsonpath={.items[*].metadata.name}").split()
        # The control-plane node: no CPU quota (unit speed), where the
        # calibration runs and the operator.
        c.control = c.kubectl("get", "nodes", "-l", "node-role.kubernetes.io/control-plane=true",
                              "-o", "jsonpath={.items[0].metadata.name}").strip()
        if not c.control:
            raise SystemExit("realnodes-bench: no node carries "
                             "node-role.kubernetes.io/control-plane=true")
        print(f"real-node cluster up in {time.time() - t0:.1f} s: {' '.join(c.boards)}",
              flush=True)
        for board in c.boards:
            self.speeds[board] = float(c.kubectl(
                "get", "node", board, "-o",
                r"jsonpath={.metadata.annotations.ballast\.io/emulated-speed}"))
        self.total_speed = sum(self.speeds.values())
        self.cpus = int(c.kubectl("get", "node", c.boards[0], "-o",
                                  "jsonpath={.status.allocatable.cpu}"))
        # The boards' runtime (BALLAST_TESTENV_CONTAINERD=2: containerd 2.x, where a
        # WeightedJob's pods in the user's image mount the worker's bundle as an
        # image volume instead of copying it with an init container).
        runtime = c.kubectl("get", "node", c.boards[0], "-o",
                            "jsonpath={.status.nodeInfo.containerRuntimeVersion}")
        kubelet = c.kubectl("get", "node", c.boards[0], "-o",
                            "jsonpath={.status.nodeInfo.kubeletVersion}")
        print(f"runtime: {runtime}, kubelet {kubelet}", flush=True)
        # The chart and the images from the bed's registry, as a cluster installs
        # from ghcr.io: the chart by its OCI reference, the images pulled by the
        # nodes (tests/testenv/realnodes/lib.sh, chart_args and bed_image_args).
        # The operator on the control-plane node, by the install guide's
        # selector for a k3s server: on a board it would take that board's CPU
        # from the work, and its request would keep a one-pod-a-board Indexed
        # Job off it.
        registry = c.env["BALLAST_TESTENV_REGISTRY"]
        self.worker_image = f"{registry}/ballast-io/ballast-worker:{self.version}"
        chart_meta = (self.root / "helm/ballast/Chart.yaml").read_text()
        chart_version = re.search(r'^version: *"?([^"\n]*)"?$', chart_meta, re.M).group(1)
        helm = ["helm", "install", "ballast", f"oci://{registry}/charts/ballast", "-n", self.ns,
                "--create-namespace", "--version", chart_version, "--plain-http",
                "--set", f"imageRegistry={registry}/ballast-io",
                "--set-string", r"operator.nodeSelector.node-role\.kubernetes\.io/control-plane=true",
                "--wait", "--timeout", "240s"]
        # With --keep the operator logs each report and its answer
        # (docs/local-mode.md, "Reading a run's decisions").
        if self.options.keep:
            helm += ["--set", "operator.verbose=true"]
        # --pull-start: no probe, whose DaemonSet pulls the worker image on
        # every node at install and keeps its layers in use.
        if self.options.pull_start:
            helm += ["--set", "probe.enabled=false"]
        run(helm, cwd=self.root, env=c.env)
        if not self.options.authorizer_race:
            c.grant_node_reads()

    def stop(self):
        subprocess.run([str(self.root / "scripts/testenv-down")], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", str(self.work)])


def commit_of(root):
    """The tree's commit, "+changes" when tracked files differ from it, or
    "unknown" outside a git checkout."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=False)
    head = git("rev-parse", "--short=7", "HEAD")
    if head.returncode != 0:
        return "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + ("+changes" if changed else "")


def labels_for(name, variants):
    labels = {"oracle": "oracle split (the reference)", "weighted": "WeightedJob, adaptive"}
    for v in variants:
        split, completions, per_node = v.split(":")
        labels[v] = report.indexed_label(split, completions, per_node, name)
    return labels


def run_line(label, f, expected):
    """A run's line as it ends, and a warning when its result is not exact."""
    print(f"  {label:<40} {f['makespan']:7.2f} s, boards {f['boards_cpu']:6.2f} CPU s, "
          f"busy {f['busy']:.3f}, result {f['result']}", flush=True)
    if f.get("authorizer"):
        print(f"    {label}: the node authorizer refused the start of "
              f"{', '.join(f['authorizer'])} (its race; the kubelet retried)", flush=True)
    if f["result"] != expected:
        warn(f"{label}: result {f['result']}, expected {expected}")


def calibrate(bench, workload):
    """The calibration and what follows from it: the oracle's lists, the
    lower bound. Returns (lists, the work's CPU s, the expected result).
    With --keep, each item's CPU seconds and its board in the oracle's
    split go to DIR/WORKLOAD/calibration.tsv."""
    costs, expected = workload.calibrate()
    work = sum(costs.values())
    lists, loads, planned = figures.oracle_split(costs, bench.speeds)
    bound, parts = figures.lower_bound(costs.values(), bench.speeds.values())
    print(f"calibration: {len(costs)} items, {work:.2f} CPU s on one core (the one-core limit "
          f"{work / bench.total_speed:.2f} s); the largest item {max(costs.values()):.2f} s"
          + (f"; the command's start, {workload.start_cost:.2f} CPU s a run (its "
             f"{workloads.GROUP_ITEMS} cheapest items in one run against each alone; a run of "
             f"none {workload.empty_cost:.2f}), taken off each item"
             if workload.start_cost else ""))
    print("oracle split (largest first, each to the board that finishes it earliest): "
          + ", ".join(f"{b} {len(lists[b])} items {loads[b]:.2f} CPU s" for b in lists)
          + f"; planned {planned:.2f} s")
    if bench.options.keep:
        board_of = {item: board for board, items in lists.items() for item in items}
        keep = bench.options.keep / workload.name
        keep.mkdir(parents=True, exist_ok=True)
        (keep / "calibration.tsv").write_text("item\tCPU s\toracle's board\n" + "".join(
            f"{item}\t{cpu:.3f}\t{board_of[item]}\n" for item, cpu in costs.items()))
    print(f"lower bound of any split of these items: {bound:.2f} s ("
          + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()) + ")", flush=True)
    return lists, work, expected


# The oracle's runs of a round, and the runs between each two of them.
ORACLE_RUNS = ("before", "mid", "after")


def run_round(bench, workload, number, lists, variants, labels, expected):
    """One round: the oracle, the WeightedJob, the oracle, the Indexed
    Jobs, the oracle. Each run is paired with the mean of the two oracle runs
    either side of it (round["refs"]: key -> (reference, kept)); the round is
    kept when the two around the WeightedJob are."""
    r = {"round": number, "runs": {}, "makespans": {}, "oracle": [], "refs": {}}

    def oracle(when):
        f = runs.oracle_run(bench, workload, lists, number, when)
        r["oracle"].append(f)
        run_line(f"oracle split, {when}", f, expected)

    oracle(ORACLE_RUNS[0])
    for group, when, whose in ((["weighted"], ORACLE_RUNS[1], "WeightedJob"),
                               (variants, ORACLE_RUNS[2], "Indexed Jobs")):
        if not group:
            continue
        for key in group:
            if key == "weighted":
                f = runs.weighted_run(bench, workload, number)
            else:
                f = runs.indexed_run(bench, workload, number, key)
            r["runs"][key] = f
            r["makespans"][key] = f["makespan"]
            run_line(labels[key], f, expected)
        oracle(when)
        either_side = r["oracle"][-2:]
        before, after = (f["makespan"] for f in either_side)
        kept = figures.bracket_kept(before, after)
        for key in group:
            r["refs"][key] = (figures.reference(before, after), kept)
        refused = [w for w, f in zip(ORACLE_RUNS[len(r["oracle"]) - 2:], either_side)
                   if f.get("authorizer")]
        print(f"  the oracle's bracket of the {whose} {before:.2f} / {after:.2f} s, "
              f"{figures.bracket_spread(before, after) * 100:.1f} % apart: "
              + ("kept" if kept else "discarded")
              + (f" (the node authorizer refused a pod's start in its run {' and '.join(refused)})"
                 if refused else ""), flush=True)
    r["makespans"]["oracle"], r["kept"] = r["refs"]["weighted"]
    print("  over the oracle either side: " + ", ".join(
        f"{labels[k]} {r['makespans'][k] / r['refs'][k][0]:.3f}" for k in r["refs"]), flush=True)
    return r


def run_workload(bench, name):
    options = bench.options
    workload = workloads.make(bench, name)
    variants = options.variants or INDEXED[name]
    keys = ["weighted", *variants]
    labels = labels_for(name, variants)
    workload.setup()
    print(f"\njob: {workload.describe}; boards "
          + ", ".join(f"{b} {s:g}" for b, s in bench.speeds.items())
          + f" = {bench.total_speed:g} cores", flush=True)
    lists, work, expected = calibrate(bench, workload)
    bad = workload.bad_cost() if workload.corrupt and not options.no_corrupt else None
    rounds = []
    while not figures.enough_rounds(rounds, options.kept, options.repeat):
        number = len(rounds) + 1
        print(f"round {number}:", flush=True)
        rounds.append(run_round(bench, workload, number, lists, variants, labels, expected))
        if options.keep:
            (options.keep / name).mkdir(parents=True, exist_ok=True)
            pool.save(options.keep / name / pool.FILE_NAME, pool.record(
                name, bench.commit, bench.started, work, bench.total_speed, keys,
                labels, rounds))
    short = figures.short_of_kept(rounds, options.kept)
    if short:
        warn(f"{name}: {figures.kept_count(rounds)} rounds kept of {len(rounds)}, "
             f"fewer than --kept {options.kept}")
    print("\n".join(report.workload_report(name, rounds, keys, labels, work, bench.total_speed)),
          flush=True)
    if bad is not None:
        corrupt_round(bench, workload, rounds, variants, labels, expected, bad)
    return not short


def corrupt_round(bench, workload, rounds, variants, labels, expected, bad):
    """One round with the bad input among the items: the WeightedJob as the
    example ships it, and the best Indexed Job with backoffLimitPerIndex 2
    (the same three attempts as the job's retries: 2)."""
    used = [r for r in rounds if r["kept"]] or rounds
    ratios = {k: figures.paired(rounds, k, "oracle") for k in variants}
    best = figures.best_by_median(ratios) or min(
        variants, key=lambda k: figures.median(r["makespans"][k] for r in rounds))
    print(f"\ncorrupt round: {workload.corrupt} among the items; one attempt at it costs "
          f"{bad:.2f} CPU s at unit speed", flush=True)
    for key in ("weighted", best):
        clean = figures.median(r["makespans"][key] for r in used)
        clean_cpu = figures.median(r["runs"][key]["boards_cpu"] for r in used)
        if key == "weighted":
            f = runs.weighted_run(bench, workload, 1, corrupt=True)
            tail = f"failed items attempted {f.get('attempts') or 'no'} times"
        else:
            f = runs.indexed_run(bench, workload, 1, key, corrupt=True)
            tail = f"failed indexes {f.get('failed') or 'none'}"
        if f["result"] != expected:
            warn(f"{workload.name} corrupt round, {labels[key]}: the good items' result "
                 f"{f['result']}, expected {expected}")
        print(f"{labels[key]:<42} {f['makespan']:7.2f} s (clean {clean:.2f}: "
              f"{f['makespan'] - clean:+.2f} s), boards {f['boards_cpu']:.2f} CPU s (clean "
              f"{clean_cpu:.2f}: {f['boards_cpu'] - clean_cpu:+.2f}), {tail}, result "
              f"{f['result']}", flush=True)


def pull_start(bench):
    """--pull-start N: N cold and N warm starts of a small primes WeightedJob,
    interleaved; prints each and the medians."""
    c = bench.cluster
    n = bench.options.pull_start
    workload = workloads.make(bench, "primes")
    workload.setup()
    registry = c.env["BALLAST_TESTENV_REGISTRY"]
    size, image_id = cluster.image_manifest(registry, "ballast-io/ballast-worker", bench.version)
    print(f"\nthe worker image's pull in the start: {workload.describe} on "
          f"{' '.join(c.boards)}; {bench.worker_image}, {report.si_bytes(size)} compressed",
          flush=True)
    # The registry's name, the archive's the bed imported at its start, and
    # the image's ID (the CRI plugin's name sha256:..., which a kept
    # containerd root may hold with no other name left beside it).
    names = [bench.worker_image, f"ghcr.io/ballast-io/ballast-worker:{bench.version}"]
    if image_id:
        names.append(image_id)
    firsts = {"cold": [], "present": []}
    alls = {"cold": [], "present": []}
    for number in range(1, n + 1):
        for kind in ("cold", "present"):
            if kind == "cold":
                c.forget_image(names)
            f = runs.pull_start_run(bench, workload, f"pull-{kind}-{number}")
            firsts[kind].append(f["first"])
            alls[kind].append(f["every"])
            print(report.pull_run_line(number, kind, f["first"], f["every"], f["took"],
                                       f["phase"]), flush=True)
            if f["pulls"]:
                print("    each board: " + ";".join(f["pulls"]), flush=True)
    print("\n".join(report.pull_summary(firsts, alls)), flush=True)
    # The archive's name back on the boards: the bed imports each archive once
    # into their kept containerd roots, and a user without a registry
    # (realnodes_chart_lifecycle) runs it under that name.
    c.import_image(bench.cache / "images" / bench.version
                   / f"ballast-worker-{bench.version}-amd64.tar")


def pooled_report(options):
    """--pool: the tables over earlier runs' rounds, per workload (those of
    --workload when it names some). Returns the exit status."""
    try:
        records = [(str(path), pool.load(path)) for path in pool.files(options.pool)]
        pooled = pool.merge(records)
    except pool.PoolError as error:
        print(f"realnodes-bench: {error}", file=sys.stderr)
        return 1
    names = [n for n in pooled if options.workload == "all" or n in options.workloads]
    if not names:
        print(f"realnodes-bench: no rounds of {', '.join(options.workloads)} in "
              f"{', '.join(map(str, options.pool))}", file=sys.stderr)
        return 1
    short = []
    for name in names:
        entry = pooled[name]
        print("\n".join(["", *pool.sources_lines(name, entry["sources"])]))
        print("\n".join(report.workload_report(name, entry["rounds"], entry["keys"],
                                               entry["labels"], entry["work"],
                                               entry["total_speed"])), flush=True)
        if figures.short_of_kept(entry["rounds"], options.kept):
            short.append(name)
    if short:
        warn(f"fewer rounds kept than --kept {options.kept}: {', '.join(short)}")
        return EXIT_SHORT_OF_KEPT
    return 0


def main(argv):
    options = parse(argv)
    if options.pool:
        return pooled_report(options)
    if os.geteuid() != 0:
        print("realnodes-bench: real nodes need root", file=sys.stderr)
        return 1
    root = pathlib.Path(__file__).resolve().parents[2]
    bench = Bench(root, options)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        bench.start()
        if options.pull_start:
            pull_start(bench)
            return 0
        short = [name for name in options.workloads if not run_workload(bench, name)]
    except KeyboardInterrupt:
        return 130
    finally:
        bench.stop()
    if short:
        warn(f"fewer rounds kept than --kept {options.kept}: {', '.join(short)}")
        return EXIT_SHORT_OF_KEPT
    return 0
