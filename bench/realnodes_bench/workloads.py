"""The six workloads: how each is set up on the bed, calibrated (each
item's CPU seconds on one core), and what its WeightedJob, its Indexed Job
and its oracle pods are, how their results read and are checked.

primes runs in the ballast-worker image; thumbnails, recompress, anomalies,
testsuite and compile are examples/<name>: the user's image built from its
Containerfile, the inputs made by the example's maker on a host directory
that every board mounts as a PersistentVolume (the claim the example
names), the items in the ConfigMap the example names: the files with their
sizes as costs, or (testsuite) the tests with the durations the maker's
stand-in CI recorded, listed by the example's shard-list."""
import json
import os
import pathlib
import resource
import shutil
import subprocess

import yaml

from . import figures
from .cluster import run, warn
from .timing import items_cpu

SECURITY = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]}}
POD_SECURITY = {"runAsNonRoot": True, "runAsUser": 65532,
                "seccompProfile": {"type": "RuntimeDefault"}}
POOL = {"ballast.io/pool": "seed000"}


# An item name of the start calibration: its run gets an empty items file.
EMPTY = "@empty-"
# ... and one whose run gets the items of /data/calibration-group, one a line.
GROUP = "@group-"
# The cheapest items run together to measure a run's start (run_start).
GROUP_ITEMS = 8


def start_of(costs):
    """The start of a command from the CPU seconds of its empty runs: their
    median (0 with none)."""
    costs = sorted(costs)
    if not costs:
        return 0.0
    mid = len(costs) // 2
    return costs[mid] if len(costs) % 2 else (costs[mid - 1] + costs[mid]) / 2


def run_start(empty, singles, together):
    """A run's start, in CPU seconds, from the runs of the start calibration:
    `empty`, runs with no item; `singles`, some items each run alone;
    `together`, runs of all those items at once. Each single run paid the
    start and a run of them all paid it once, so the start is what the
    singles cost beyond the median run of them all, per run saved. It is at
    least the median run with no item (a command that ends early when given
    none shows only part of its start so) and at most the cheapest single
    run. Without two singles and a run of them, the median empty run."""
    floor = start_of(empty)
    if len(singles) < 2 or not together:
        return floor
    paired = (sum(singles) - start_of(together)) / (len(singles) - 1)
    return min(max(floor, paired), min(singles))


def without_start(name, costs, start):
    """Each item's CPU seconds less the command's start (`costs`: item -> the
    CPU of a run of that item alone). Exits naming the workload when the
    start is not below the median item's run: the empty run then did more
    than start the command (run everything, say, when given no item), and
    taking it off would leave nothing."""
    typical = start_of(costs.values())
    if start >= typical:
        raise SystemExit(
            f"realnodes-bench: {name}: a run with no item cost {start:.2f} CPU s, not less than "
            f"the median item's run ({typical:.2f}): the empty run does more than start the "
            f"command (does it run everything when given no item?)")
    return {item: max(0.0, cost - start) for item, cost in costs.items()}


def on_node(node):
    return {"kubernetes.io/hostname": node}


def messages(pod):
    """The termination messages of a pod's init containers and containers,
    in order."""
    status = pod.get("status") or {}
    out = []
    for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        message = ((c.get("state") or {}).get("terminated") or {}).get("message", "")
        if message.strip():
            out.append(message)
    return out


class Workload:
    """What every workload answers; `bench` is the Bench of cli.py (the
    cluster, the options, the work directory)."""
    name = ""
    corrupt = None  # the bad input of the corrupt round, or None

    def __init__(self, bench):
        self.bench = bench
        self.cluster = bench.cluster
        self.describe = ""
        self.start_cost = 0.0  # CPU s of a run's start, taken off every item
        self.empty_cost = 0.0  # CPU s of a run with no item (a floor of the start)

    def check(self, run_name):
        """Compares a run's outputs with the reference's (nothing to compare
        by default)."""


class Primes(Workload):
    """Primes below --limit by trial division, in the ballast-worker image.
    Its items are numbers; the oracle deals equal shares of the job's known
    cost (`ballast-worker slice --split cost`), each share's CPU measured."""
    name = "primes"

    def __init__(self, bench):
        super().__init__(bench)
        self.limit = bench.options.limit
        self.spec = json.dumps({"workload": {"primes": {"limit": self.limit, "method": "trial"}}})
        self.chunks = figures.equal_chunks(list(bench.speeds.values()))
        self.describe = f"primes below {self.limit} (trial division)"

    def setup(self):
        pass

    def _slice_args(self, index, count, split="cost"):
        return ["slice", "--count", str(count), "--split", split, "--index", str(index),
                "--spec", self.spec]

    def calibrate(self):
        """Each share's CPU seconds on one core: the worker's own process
        computing it here, one after another (no pod: its pods cost what
        the host's process does). Returns (share -> CPU s, the result)."""
        worker = str(self.bench.build / "ballast-worker")
        costs = {}
        count = 0
        for index in range(self.chunks):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = run([worker, *self._slice_args(index, self.chunks)])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            costs[str(index)] = (after.ru_utime + after.ru_stime
                                 - before.ru_utime - before.ru_stime)
            count += json.loads(out)["result"]["primes"]["count"]
        return costs, str(count)

    def oracle_pod(self, name, board, shares):
        """A plain pod on `board` computing its shares one after another:
        each but the last in an init container, the last in the container
        (the image has no shell to loop in)."""
        containers = [{"name": f"share-{share}", "image": self.bench.worker_image,
                       "imagePullPolicy": "IfNotPresent",
                       "args": [*self._slice_args(share, self.chunks)[:-2], "--result-file",
                                "/dev/termination-log", "--spec", self.spec],
                       "securityContext": SECURITY} for share in shares]
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": {"bench-oracle": self.bench.oracle_label}},
                "spec": {"restartPolicy": "Never", "nodeSelector": on_node(board),
                         "securityContext": POD_SECURITY,
                         "initContainers": containers[:-1], "containers": containers[-1:]}}

    def oracle_result(self, pods):
        return str(sum(json.loads(m)["result"]["primes"]["count"]
                       for pod in pods for m in messages(pod)))

    def weighted(self, name, corrupt=False):
        job = yaml.safe_load((self.bench.root / "examples/jobs/primes-300000.yaml").read_text())
        job["metadata"]["name"] = name
        job["spec"]["workload"]["primes"]["limit"] = self.limit
        job["spec"]["nodeSelector"] = POOL
        return job

    def weighted_result(self, job):
        return str(((job.get("status") or {}).get("result") or {}).get("primes", {}).get("count"))

    def indexed(self, split, completions, request, corrupt=False):
        """The Indexed Job's pod spec: `ballast-worker slice` of share
        JOB_COMPLETION_INDEX, its result in the termination message."""
        return {"containers": [{
            "name": "share", "image": self.bench.worker_image,
            "imagePullPolicy": "IfNotPresent",
            "args": ["slice", "--count", str(completions), "--split", split, "--result-file",
                     "/dev/termination-log", "--spec", self.spec],
            "resources": {"requests": {"cpu": request}}, "securityContext": SECURITY}]}

    def indexed_result(self, texts):
        return str(sum(json.loads(t)["result"]["primes"]["count"] for t in texts if t.strip()))


# How each share workload is made and run; "run" is a shell command that does
# the items listed in $ITEMS and writes the summed result to $RESULT, as a
# user would script it outside Ballast (the calibration, the oracle's pods,
# the Indexed Job).
SHARE = {
    "thumbnails": {
        "make": ["examples/thumbnails/make-photos", "{dir}", "--count", "{photos}",
                 "--scale", "{scale}", "--seed", "11"],
        "skip": None,
        "run": "BALLAST_ITEMS_FILE=$ITEMS BALLAST_RESULT_FILE=$RESULT thumbnail",
        "fields": ["thumbnails"], "outputs": True, "claim": "photos", "list": "photos-list",
        "corrupt": None},
    "recompress": {
        "make": ["examples/recompress/make-archives", "{dir}", "--megabytes", "{megabytes}",
                 "--seed", "11", "--corrupt"],
        "suffix": ".gz", "skip": "corrupt/",
        "run": "BALLAST_ITEMS_FILE=$ITEMS BALLAST_RESULT_FILE=$RESULT recompress",
        "fields": ["archives", "bytesOut"], "outputs": True, "claim": "archives",
        "list": "archives-list", "corrupt": "corrupt/truncated.gz"},
    "anomalies": {
        "make": ["examples/anomalies/make-series", "{dir}", "--points", "{points}",
                 "--seed", "11", "--corrupt"],
        "suffix": ".csv", "skip": "corrupt/",
        # The script takes one file a run (the job says perItem): so does the loop.
        "run": 'status=0; while IFS= read -r item; do printf "%s\\n" "$item" >/tmp/item; '
               'rm -f /tmp/one; BALLAST_ITEMS_FILE=/tmp/item BALLAST_RESULT_FILE=/tmp/one '
               'python3 /usr/local/bin/anomalies.py || status=1; '
               '[ -s /tmp/one ] && { cat /tmp/one; echo; } >>/tmp/all; done <"$ITEMS"; '
               'python3 -c "import json, sys; rs = [json.loads(l) for l in sys.stdin if '
               'l.strip()]; print(json.dumps({k: sum(r[k] for r in rs) for k in '
               '(\\"series\\", \\"points\\", \\"anomalies\\")}))" </tmp/all >"$RESULT"; '
               'rm -f /tmp/all; exit $status',
        "fields": ["series", "points", "anomalies"], "outputs": False, "claim": "series",
        "list": "series-list", "corrupt": "corrupt/series-bad.csv"},
    # Its items are tests, their costs the durations in the checkout's
    # .test_durations (examples/testsuite/shard-list), recorded on another
    # machine and partly stale; its outputs are the counts of tests passed and
    # of the cases they checked, exact.
    "testsuite": {
        "make": ["examples/testsuite/make-suite", "{dir}", "--seconds", "{suite_seconds}",
                 "--seed", "11", "--failing"],
        "costs": "durations", "paths": ["tests"],
        "run": "BALLAST_ITEMS_FILE=$ITEMS BALLAST_RESULT_FILE=$RESULT "
               "python3 /usr/local/bin/run-shard",
        "fields": ["passed", "cases"], "outputs": False, "claim": "suite", "list": "tests-list",
        "corrupt": "regressions/test_open_bugs.py::test_encode_nan_as_null",
        "describe": "Pareto costs, declared by past durations"},
    # Its items are C sources, their sizes the costs; a kilobyte of tables
    # compiles about twenty times faster than one of loops. Nothing was tuned
    # on it.
    "compile": {
        "make": ["examples/compile/make-tree", "{dir}", "--kilobytes", "{kilobytes}",
                 "--seed", "11", "--corrupt"],
        "suffix": ".c", "skip": "corrupt/",
        "run": "BALLAST_ITEMS_FILE=$ITEMS BALLAST_RESULT_FILE=$RESULT compile",
        "fields": ["objects", "bytesOut"], "outputs": True, "claim": "sources",
        "list": "sources-list", "corrupt": "corrupt/broken.c",
        "describe": "Pareto sizes of three kinds, compiled by cc -O2"},
}


def list_lines(share_in, suffix, skip):
    """The share's items, "size<TAB>path" sorted by path: every file under
    `share_in` (those ending in `suffix`, outside `skip`, when given)."""
    rows = []
    for path in share_in.rglob("*"):
        rel = path.relative_to(share_in).as_posix()
        if not path.is_file() or (suffix and not rel.endswith(suffix)):
            continue
        if skip and rel.startswith(skip):
            continue
        rows.append((rel, path.stat().st_size))
    return [f"{size}\t{rel}" for rel, size in sorted(rows)]


def duration_lines(root, paths):
    """The suite's tests at `root` (within `paths`), "ms<TAB>node id" in the
    order pytest collects them, as the example's shard-list prints them."""
    script = pathlib.Path(__file__).resolve().parents[2] / "examples/testsuite/shard-list"
    return run([str(script), str(root), *paths]).splitlines()


def sum_fields(lines, fields):
    """The compared fields of JSON objects, one a line, summed: "a:b"."""
    rows = [json.loads(line) for line in lines if line.strip()]
    return ":".join(str(sum(r.get(k, 0) for r in rows)) for k in fields)


class Share(Workload):
    """thumbnails, recompress, anomalies, testsuite or compile: the example's job in the user's
    image on a share."""

    def __init__(self, bench, name):
        super().__init__(bench)
        self.name = name
        self.cfg = SHARE[name]
        self.corrupt = self.cfg["corrupt"]
        self.share = bench.work / f"share-{name}"
        self.image = f"localhost/{name}:1"
        self.items = []  # (declared cost, value)
        self.corrupt_cost = 0  # the bad input's declared cost

    # --- set-up ---------------------------------------------------------------------
    def setup(self):
        b, c = self.bench, self.cluster
        run([str(b.root / "scripts/debian-base-image")], cwd=b.root)
        log = b.work / "build.log"
        with open(log, "w") as out:
            built = subprocess.run(["buildah", "build", "--network", "host", "--layers", "--quiet",
                                    "-t", self.image, f"examples/{self.name}"], cwd=b.root,
                                   stdout=out, stderr=subprocess.STDOUT)
        if built.returncode != 0:
            raise SystemExit(f"realnodes-bench: building {self.image}: "
                             f"{log.read_text()[-2000:]}")
        archive = b.work / f"{self.name}.tar"
        run(["buildah", "push", "--quiet", self.image,
             f"docker-archive:{archive}:{self.image}"])
        for node in c.boards + [c.control]:
            run(["ctr", "--address", str(c.dir / "realnodes" / node / "containerd.sock"),
                 "-n", "k8s.io", "images", "import", str(archive)])
        archive.unlink()
        opts = b.options
        values = {"dir": str(self.share / "in"), "photos": opts.photos, "scale": opts.scale,
                  "megabytes": opts.megabytes, "points": opts.points,
                  "suite_seconds": opts.suite_seconds, "kilobytes": opts.kilobytes}
        made = run([str(a).format(**values) for a in self.cfg["make"]], cwd=b.root)
        (self.share / "out").mkdir(parents=True, exist_ok=True)
        os.chown(self.share / "out", 65532, 65532)
        lines = self._lines()
        self.items = [(int(line.split("\t")[0]), line.split("\t", 1)[1]) for line in lines]
        (b.work / "list.txt").write_text("".join(line + "\n" for line in lines))
        # The maker's line, "N images, B bytes under DIR", without the directory.
        self.describe = (f"{self.name} of {made.strip().split(' under ')[0]} "
                         f"({self.cfg.get('describe', 'Pareto sizes')})")
        self._objects(lines)
        # A board's containerd unpacks a new image at its first container,
        # within the board's quota: once here, so that no run pays it.
        c.apply(*[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"warm-{node}"},
                   "spec": {"restartPolicy": "Never", "nodeSelector": on_node(node),
                            "containers": [{"name": "warm", "image": self.image,
                                            "imagePullPolicy": "Never", "command": ["true"]}]}}
                  for node in c.boards])
        for node in c.boards:
            c.wait_for("pod", f"warm-{node}", "{.status.phase}", "^(Succeeded|Failed)$")
            c.delete("pod", f"warm-{node}")

    def _lines(self):
        """The job's list, "cost<TAB>value" a line; sets the bad input's cost."""
        share_in, cfg = self.share / "in", self.cfg
        if cfg.get("costs") == "durations":
            lines = duration_lines(share_in, cfg["paths"])
            if self.corrupt:
                bad = duration_lines(share_in, cfg["paths"] + [self.corrupt.split("::")[0]])
                self.corrupt_cost = int(next(line.split("\t")[0] for line in bad
                                             if line.split("\t", 1)[1] == self.corrupt))
            return lines
        if self.corrupt:
            self.corrupt_cost = (share_in / self.corrupt).stat().st_size
        return list_lines(share_in, cfg.get("suffix"), cfg["skip"])

    def _objects(self, lines):
        b, c, cfg = self.bench, self.cluster, self.cfg
        c.apply({"apiVersion": "v1", "kind": "PersistentVolume",
                 "metadata": {"name": f"{c.ns}-{self.name}"},
                 "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany"],
                          "storageClassName": "",
                          "hostPath": {"path": str(self.share), "type": "Directory"}}},
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": cfg["claim"]},
                 "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                          "volumeName": f"{c.ns}-{self.name}",
                          "resources": {"requests": {"storage": "10Gi"}}}})
        c.kubectl_ns("create", "configmap", cfg["list"], f"--from-file=list.txt={b.work}/list.txt")
        if self.corrupt:
            # The same list with the bad input among the others, for the corrupt round.
            corrupt = sorted(lines + [f"{self.corrupt_cost}\t{self.corrupt}"],
                             key=lambda l: l.split("\t")[1])
            (b.work / "list-corrupt.txt").write_text("".join(line + "\n" for line in corrupt))
            c.kubectl_ns("create", "configmap", f"{cfg['list']}-corrupt",
                         f"--from-file=list.txt={b.work}/list-corrupt.txt")
        # Bound before the first job: a pod whose claim is not yet bound waits
        # for the scheduler's next retry of unschedulable pods (up to 30 s).
        c.kubectl_ns("wait", "--for=jsonpath={.status.phase}=Bound", f"pvc/{cfg['claim']}",
                     "--timeout=120s")

    # --- pods of the user's image ----------------------------------------------------
    def _pod(self, name, node, script, out, label):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": label},
                "spec": {"restartPolicy": "Never", "nodeSelector": on_node(node),
                         "securityContext": POD_SECURITY,
                         "containers": [{
                             "name": "work", "image": self.image, "imagePullPolicy": "Never",
                             "command": ["sh", "-c", script],
                             "env": [{"name": "MAGICK_THREAD_LIMIT", "value": "1"},
                                     {"name": "IN", "value": "/data/in"},
                                     {"name": "OUT", "value": out}],
                             "securityContext": SECURITY,
                             "volumeMounts": [{"name": "share", "mountPath": "/data"},
                                              {"name": "tmp", "mountPath": "/tmp"}]}],
                         "volumes": [{"name": "share", "persistentVolumeClaim":
                                      {"claimName": self.cfg["claim"]}},
                                     {"name": "tmp", "emptyDir": {}}]}}

    def _calibration(self, pod_name, list_name, result, out):
        """One pod of the job's image, security context and volume doing
        the items of /data/LIST one at a time, alone on the control-plane
        node (no CPU quota); after each it prints "@item PATH" and its
        shell's `times` (its children's CPU so far). Returns the log's lines."""
        script = (
            'while IFS= read -r item; do case $item in '
            f'{EMPTY}*) : >/tmp/cal-item ;; {GROUP}*) cp /data/calibration-group /tmp/cal-item ;; '
            '*) printf "%s\\n" "$item" >/tmp/cal-item ;; esac; '
            'rm -f /tmp/cal-result; '
            f'(ITEMS=/tmp/cal-item RESULT=/tmp/cal-result; {self.cfg["run"]}) || true; '
            f'if [ -s /tmp/cal-result ]; then cat /tmp/cal-result; echo; fi >>{result}; '
            f'echo "@item $item"; times; done </data/{list_name}')
        c = self.cluster
        c.apply(self._pod(pod_name, c.control, script, out, {"bench-calibration": pod_name}))
        phase = c.wait_for("pod", pod_name, "{.status.phase}", "^(Succeeded|Failed)$")
        lines = c.kubectl_ns("logs", pod_name).splitlines()
        c.delete("pod", pod_name)
        if phase != "Succeeded":
            warn(f"the calibration pod {pod_name} ended {phase}: {lines[-3:]}")
        return lines

    def calibrate(self):
        """Each item's CPU seconds on one core, the calibration pod doing
        every item one at a time; its outputs are the reference the runs
        are checked against. Returns (item -> CPU s, the result's fields)."""
        shutil.rmtree(self.share / "reference", ignore_errors=True)
        (self.share / "reference.json").unlink(missing_ok=True)
        (self.share / "reference").mkdir()
        (self.share / "reference.json").touch()
        os.chown(self.share / "reference", 65532, 65532)
        os.chown(self.share / "reference.json", 65532, 65532)
        (self.share / "calibration").write_text("".join(p + "\n" for _, p in self.items))
        lines = self._calibration("bench-calibration", "calibration", "/data/reference.json",
                                  "/data/reference")
        costs, _ = items_cpu(lines)
        missing = [p for _, p in self.items if p not in costs]
        if missing:
            raise SystemExit(f"realnodes-bench: the calibration pod did not time {missing[:3]}")
        # Each item above ran in a run of its own and paid the command's
        # start (a Python and pytest, an ImageMagick), which a job's run of
        # many items pays once: that start comes off every item.
        self.start_cost = self._start_cost(costs)
        costs = without_start(self.name, costs, self.start_cost)
        expected = sum_fields((self.share / "reference.json").read_text().splitlines(),
                              self.cfg["fields"])
        if not any(ch in "123456789" for ch in expected):
            raise SystemExit("realnodes-bench: the calibration pod made no result: "
                             + (self.share / "reference.json").read_text()[:300])
        return costs, expected

    def _start_cost(self, costs, runs=5, groups=3):
        """What one run of the command costs beyond its items (its start,
        run_start): `runs` runs with no item, and `groups` runs of the
        GROUP_ITEMS cheapest items together, whose runs alone `costs` has
        (each item's run alone). A run with no item shows only part of the
        start where the command ends early when given none (testsuite's
        script, before pytest starts)."""
        cheapest = sorted(costs, key=costs.get)[:GROUP_ITEMS]
        (self.share / "calibration-group").write_text("".join(p + "\n" for p in cheapest))
        (self.share / "calibration-empty").write_text(
            "".join(f"{EMPTY}{i}\n" for i in range(runs))
            + "".join(f"{GROUP}{i}\n" for i in range(groups if len(cheapest) > 1 else 0)))
        (self.share / "empty.json").touch()
        os.chown(self.share / "empty.json", 65532, 65532)
        lines = self._calibration("bench-calibration-start", "calibration-empty",
                                  "/data/empty.json", "/tmp")
        each, _ = items_cpu(lines)
        empty = [c for n, c in each.items() if n.startswith(EMPTY)]
        self.empty_cost = start_of(empty)
        return run_start(empty, [costs[p] for p in cheapest],
                         [c for n, c in each.items() if n.startswith(GROUP)])

    def bad_cost(self):
        """What one attempt at the bad input costs at unit speed."""
        (self.share / "bad-item").write_text(self.corrupt + "\n")
        (self.share / "bad.json").touch()
        os.chown(self.share / "bad.json", 65532, 65532)
        _, total = items_cpu(self._calibration("bench-bad", "bad-item", "/data/bad.json", "/tmp"))
        return total

    def oracle_pod(self, name, board, items):
        lists = self.share / "oracle"
        lists.mkdir(exist_ok=True)
        (lists / board).write_text("".join(p + "\n" for p in items))
        script = f'ITEMS=/data/oracle/{board} RESULT=/dev/termination-log; {self.cfg["run"]}'
        return self._pod(name, board, script, "/data/out", {"bench-oracle": self.bench.oracle_label})

    def oracle_result(self, pods):
        return sum_fields([m for pod in pods for m in messages(pod)], self.cfg["fields"])

    # --- the WeightedJob and the Indexed Job -------------------------------------------
    def weighted(self, name, corrupt=False):
        """The example's job as it ships, on the boards (and one convert
        thread for thumbnails), its items from the clean or corrupt list."""
        job = yaml.safe_load((self.bench.root / f"examples/{self.name}/job.yaml").read_text())
        job["metadata"]["name"] = name
        spec = job["spec"]
        spec["nodeSelector"] = POOL
        if corrupt:
            spec["itemsFrom"]["configMap"]["name"] = f"{self.cfg['list']}-corrupt"
        for container in spec["template"]["spec"]["containers"]:
            container.setdefault("env", []).append({"name": "MAGICK_THREAD_LIMIT", "value": "1"})
        if spec["itemsFrom"]["configMap"]["name"] not in (self.cfg["list"],
                                                          f"{self.cfg['list']}-corrupt"):
            raise SystemExit(f"realnodes-bench: examples/{self.name}/job.yaml changed shape")
        return job

    def weighted_result(self, job):
        fields = (((job.get("status") or {}).get("result") or {}).get("exec") or {}).get(
            "fields") or {}
        return ":".join(str((fields.get(f) or {}).get("sum")) for f in self.cfg["fields"])

    def bins(self, split, completions, corrupt=False):
        """The ConfigMap of the Indexed Job's bins, one key a bin: "count",
        equal numbers of files in list order; "cost", packed by size
        (largest first, each into the lightest bin). Made once."""
        items = list(self.items)
        name = f"bins-{self.name}-{split}-{completions}"
        if corrupt:
            items = sorted(items + [(self.corrupt_cost, self.corrupt)], key=lambda i: i[1])
            name += "-corrupt"
        if self.cluster.kubectl_ns("get", "configmap", name, check=False).strip():
            return name
        if split == "count":
            cut = figures.split_by_count([p for _, p in items], completions)
        else:
            packed = figures.pack_by_size(items, {str(i): 1 for i in range(completions)})
            cut = [packed[str(i)] for i in range(completions)]
        self.cluster.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                            "data": {str(i): "".join(p + "\n" for p in bin_)
                                     for i, bin_ in enumerate(cut)}})
        return name

    def indexed(self, split, completions, request, corrupt=False):
        bins = self.bins(split, completions, corrupt)
        return {"containers": [{
            "name": "share", "image": self.image, "imagePullPolicy": "Never",
            "command": ["sh", "-c", "ITEMS=/bins/$JOB_COMPLETION_INDEX "
                        f"RESULT=/dev/termination-log; {self.cfg['run']}"],
            "env": [{"name": "MAGICK_THREAD_LIMIT", "value": "1"},
                    {"name": "IN", "value": "/data/in"}, {"name": "OUT", "value": "/data/out"}],
            "resources": {"requests": {"cpu": request}}, "securityContext": SECURITY,
            "volumeMounts": [{"name": "share", "mountPath": "/data"},
                             {"name": "bins", "mountPath": "/bins"},
                             {"name": "tmp", "mountPath": "/tmp"}]}],
            "volumes": [{"name": "share", "persistentVolumeClaim": {"claimName": self.cfg["claim"]}},
                        {"name": "bins", "configMap": {"name": bins}},
                        {"name": "tmp", "emptyDir": {}}]}

    def indexed_result(self, texts):
        return sum_fields(texts, self.cfg["fields"])

    def check(self, run_name):
        """Every run starts from an empty output directory and ends checked
        against the reference's outputs."""
        out = self.share / "out"
        if self.cfg["outputs"]:
            # A run may leave a directory for an output that failed.
            subprocess.run(["find", str(out), "-mindepth", "1", "-type", "d", "-empty", "-delete"])
            diff = subprocess.run(["diff", "-rq", str(self.share / "reference"), str(out)],
                                  capture_output=True, text=True)
            if diff.returncode != 0:
                warn(f"{run_name}: outputs differ from the reference run's: "
                     + " ".join((diff.stdout + diff.stderr).splitlines()[:3]))
        subprocess.run(["find", str(out), "-mindepth", "1", "-delete"])


def make(bench, name):
    return Primes(bench) if name == "primes" else Share(bench, name)

