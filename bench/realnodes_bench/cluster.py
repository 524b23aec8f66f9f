"""The bench's I/O with the real-node bed, thin: kubectl and helm, a watch
of pods, waits on a watch, and the CPU the kernel counted for the boards'
pods, the control-plane node's pods (the operator) and the control plane's
processes. Everything here runs a command or reads a file; what the figures
mean is in figures.py and timing.py."""
import json
import os
import pathlib
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request

from . import timing

CGROUP_V1_CPUACCT = pathlib.Path("/sys/fs/cgroup/cpuacct")


def now():
    return time.time()


def run(args, input=None, check=True, env=None, cwd=None):
    """A command's stdout (text); raises SystemExit with its stderr when it
    fails and `check`."""
    done = subprocess.run(args, input=input, capture_output=True, text=True, env=env, cwd=cwd)
    if check and done.returncode != 0:
        raise SystemExit(f"realnodes-bench: {' '.join(map(str, args[:4]))} ... failed: "
                         f"{done.stderr.strip()[-600:]}")
    return done.stdout


def warn(message):
    print(f"realnodes-bench: {message}", file=sys.stderr, flush=True)


def note(message):
    """A line beside the figures, on stderr (as the runs' details)."""
    print(message, file=sys.stderr, flush=True)


def bed_env(testenv_dir):
    """The environment `scripts/testenv-up` wrote into DIR/env, over ours."""
    out = run(["bash", "-c", 'source "$1/env" && env -0', "-", str(testenv_dir)])
    env = dict(os.environ)
    for entry in out.split("\0"):
        if "=" in entry:
            key, value = entry.split("=", 1)
            env[key] = value
    return env


def image_manifest(registry, repository, tag, arch="amd64"):
    """An image's compressed size for `arch` (its layers') and its ID (its
    config's digest: the name sha256:... the CRI plugin gives it on a node),
    from a registry's manifests (plain HTTP, as the bed's): its index at
    `tag`, then the platform's manifest. (0, None) when the registry does
    not say."""
    base = f"http://{registry}/v2/{repository}/manifests"

    def get(ref, kind):
        request = urllib.request.Request(
            f"{base}/{ref}", headers={"Accept": f"application/vnd.oci.image.{kind}.v1+json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)

    try:
        index = get(tag, "index")
        manifest = get(next(m for m in index["manifests"]
                            if (m.get("platform") or {}).get("architecture") == arch)["digest"],
                       "manifest")
        return sum(layer["size"] for layer in manifest["layers"]), manifest["config"]["digest"]
    except (OSError, ValueError, KeyError, StopIteration):
        return 0, None


def realnodes_cgroup(root):
    """The boards' cgroup root's name, as tests/testenv/realnodes.sh makes it."""
    text = (root / "tests/testenv/realnodes.sh").read_text()
    return re.search(r"^realnodes_cgroup=([a-z-]+)", text, re.M).group(1)


def json_objects(text):
    """The whole JSON objects at the start of `text` (kubectl's --watch -o
    json writes one after another) and what is left after them."""
    decoder = json.JSONDecoder()
    objects = []
    while True:
        text = text.lstrip()
        if not text:
            return objects, ""
        try:
            value, end = decoder.raw_decode(text)
        except json.JSONDecodeError:
            return objects, text
        objects.append(value)
        text = text[end:]


class Cluster:
    """The bed: kubectl in one namespace, and its nodes' CPU counters."""

    def __init__(self, root, testenv_dir, namespace, env):
        self.root = root
        self.dir = pathlib.Path(testenv_dir)
        self.ns = namespace
        self.env = env
        self.cgroup = CGROUP_V1_CPUACCT / realnodes_cgroup(root)
        self.boards = []
        self.control = ""

    def kubectl(self, *args, input=None, check=True):
        return run(["kubectl", *map(str, args)], input=input, check=check, env=self.env)

    def kubectl_ns(self, *args, input=None, check=True):
        return self.kubectl("-n", self.ns, *args, input=input, check=check)

    def get(self, *args):
        """An object or list of the namespace as JSON."""
        return json.loads(self.kubectl_ns("get", *args, "-o", "json"))

    def jsonpath(self, kind, name, path):
        return self.kubectl_ns("get", kind, name, "-o", f"jsonpath={path}", check=False)

    def apply(self, *objects):
        """Applies the objects (dicts) in one `kubectl apply`."""
        items = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
        self.kubectl_ns("apply", "-f", "-", input=json.dumps(items))

    def grant_node_reads(self):
        """Lets the boards read the claims, ConfigMaps and Secrets of the
        bench's namespace (and the PersistentVolumes) by RBAC, beside the node
        authorizer. That authorizer allows a kubelet to read what a pod bound
        to it names only once the API server's graph of pods and nodes has
        taken in the pod; on this two-core bed a kubelet often asks first, is
        refused, and retries the pod about 10 s later (timing.AUTHORIZER_SIGNS).
        That lands on any run, the oracle's too, at random: with the grant the
        refusal falls through to RBAC and no run waits. --authorizer-race
        leaves it out."""
        name = f"ballast-bench-node-reads-{self.ns}"
        nodes = [{"kind": "Group", "name": "system:nodes",
                  "apiGroup": "rbac.authorization.k8s.io"}]
        self.apply(
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": name},
             "rules": [{"apiGroups": [""], "resources": ["persistentvolumes"],
                        "verbs": ["get"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": name}, "subjects": nodes,
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": name}},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": "ballast-bench-node-reads"},
             "rules": [{"apiGroups": [""],
                        "resources": ["persistentvolumeclaims", "configmaps", "secrets"],
                        "verbs": ["get", "list", "watch"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": "ballast-bench-node-reads"}, "subjects": nodes,
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                         "name": "ballast-bench-node-reads"}})

    def delete(self, *args):
        self.kubectl_ns("delete", *args, "--wait=true", check=False)

    def wait_gone(self, selector, seconds=120):
        self.kubectl_ns("wait", "--for=delete", "pod", "-l", selector, f"--timeout={seconds}s",
                        check=False)

    def wait_for(self, kind, name, path, pattern):
        """Until the object's field (a jsonpath) matches `pattern`, on a watch.
        A watch may miss a change (seen once: a split pod Completed while its
        watch printed nothing for 12 minutes): after 5 s without a line the
        value is read once, and a match ends the wait as the watch's would.
        Returns the matching value."""
        regex = re.compile(pattern)
        lines = queue.Queue()
        proc = subprocess.Popen(
            ["kubectl", "-n", self.ns, "get", kind, name, "--watch", "-o",
             "jsonpath=" + path + '{"\\n"}'], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=self.env)

        def read():
            for line in proc.stdout:
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        try:
            while True:
                try:
                    value = lines.get(timeout=5)
                except queue.Empty:
                    value = self.jsonpath(kind, name, path)
                if regex.search(value.strip()):
                    return value.strip()
        finally:
            proc.kill()
            proc.wait()

    def ctr(self, node, *args, check=True):
        """`ctr` on a node's containerd, in the kubelet's namespace."""
        return run(["ctr", "--address", str(self.dir / "realnodes" / node / "containerd.sock"),
                    "-n", "k8s.io", *args], check=check)

    def forget_image(self, names, seconds=120):
        """Removes an image from every board's containerd under each of its
        `names` (the registry's and the archive's the bed imported: the same
        layer) and every other name it has there (after a pull: by digest and
        by ID), each once no container of the first is left (the kubelet
        removes a deleted pod's containers within its minute of container
        GC), so that its layer goes too and the next pull unpacks it again."""
        deadline = time.monotonic() + seconds
        for node in self.boards:
            while self.ctr(node, "containers", "ls", "-q", f"image=={names[0]}",
                           check=False).strip():
                if time.monotonic() >= deadline:
                    warn(f"{node} still has containers of {names[0]}")
                    break
                time.sleep(1)
            refs = timing.image_refs(self.ctr(node, "images", "ls", check=False), names)
            self.ctr(node, "images", "rm", "--sync", *(refs or names), check=False)

    def import_image(self, archive):
        """Imports an image archive into every board's containerd."""
        for node in self.boards:
            self.ctr(node, "images", "import", str(archive), check=False)

    # --- CPU the kernel counted -------------------------------------------------
    def node_cpu(self, node):
        """CPU seconds charged so far to the node's pods (its kubepods cgroup:
        containers, init containers, pause; a pod's time stays counted there
        after the pod is gone)."""
        return int((self.cgroup / node / "kubepods/cpuacct.usage").read_text()) / 1e9

    def boards_cpu(self):
        return sum(self.node_cpu(b) for b in self.boards)

    def control_plane_cpu(self):
        """CPU seconds of the control plane's processes so far: those of the
        bed's pid files that are no board's (API server, datastore,
        controller-manager, scheduler, cluster DNS, the control-plane node's
        kubelet and containerd), from /proc."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for pid_file in sorted((self.dir / "pids").glob("*")):
            if any(board in pid_file.name for board in self.boards):
                continue
            try:
                pid = pid_file.read_text().strip()
                fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
        return total

    def counters(self):
        """The CPU counters a run reads before and after: boards, the
        control-plane node's pods, the control plane's processes."""
        return {"boards": self.boards_cpu(), "operator": self.node_cpu(self.control),
                "control plane": self.control_plane_cpu()}

    def sampler(self):
        return CgroupSampler(self)

    def watch_pods(self, selector):
        return PodWatch(self, selector)


class CgroupSampler:
    """Each board's pods' CPU seconds, sampled every `period` seconds in a
    thread until stop(): what timing.busy_span reads."""

    def __init__(self, cluster, period=0.25):
        self.cluster = cluster
        self.period = period
        self.samples = {board: [] for board in cluster.boards}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            t = now()
            try:
                sample = {board: self.cluster.node_cpu(board) for board in self.samples}
            except FileNotFoundError:
                # The bed is being torn down (the bench interrupted): its
                # cgroups are gone, and so is anything left to sample.
                return
            for board, cpu in sample.items():
                self.samples[board].append((t, cpu))
            self._stop.wait(self.period)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.samples


class PodWatch:
    """The pods a label selector picks, every change as a watch of the API
    shows it (kubectl get --watch -o json), stamped with the bench's clock."""

    def __init__(self, cluster, selector):
        self.cluster = cluster
        self.selector = selector
        self.seen = []
        self.latest = {}
        self._changed = threading.Condition()
        self._proc = subprocess.Popen(
            ["kubectl", "-n", cluster.ns, "get", "pods", "-l", selector, "--watch", "-o", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=cluster.env)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _add(self, t, pod):
        with self._changed:
            self.seen.append(timing.pod_seen(t, pod))
            self.latest[pod["metadata"]["name"]] = pod
            self._changed.notify_all()

    def _read(self):
        buffer = ""
        while True:
            chunk = self._proc.stdout.readline()
            if not chunk:
                return
            buffer += chunk
            # kubectl writes each object indented, its closing brace alone
            # at the line's start: only then is a whole one there.
            if chunk.startswith("}"):
                objects, buffer = json_objects(buffer)
                for pod in objects:
                    if pod.get("kind") == "Pod":
                        self._add(now(), pod)

    def poll(self):
        """Reads the pods once, for a change the watch missed."""
        for pod in self.cluster.get("pods", "-l", self.selector)["items"]:
            self._add(now(), pod)

    def wait_ended(self, count):
        """Until `count` pods were seen and every one has ended."""
        while True:
            with self._changed:
                ended = [p for p in self.latest.values()
                         if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")]
                if len(self.latest) >= count and len(ended) == len(self.latest):
                    return
                if self._changed.wait(timeout=5):
                    continue
            self.poll()

    def stop(self):
        self._proc.kill()
        self._proc.wait()
        self._thread.join(timeout=5)
        return list(self.seen)
