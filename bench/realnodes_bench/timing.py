"""Where a run's time went, from what the bench saw, pure: the pods' changes
as a watch of the API showed them (when each was bound to a board, was
initialized, ran its container, ended) and each board's CPU as its cgroup
counted it, sampled a few times a second. No I/O; the watch and the
sampler are in cluster.py, the tests in tests/bench/realnodes_figures_test.py."""
import collections
import re

# One change of a pod as the watch saw it: `t` the bench's clock, `node`
# "" until it is bound, `initialized` its Initialized condition True (init
# containers done), `running` a container running, `ended` the pod
# Succeeded or Failed.
PodSeen = collections.namedtuple("PodSeen", "t name node phase initialized running ended")


def pod_seen(t, pod):
    """A PodSeen from a pod object of the API at time t."""
    status = pod.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    running = any("running" in (c.get("state") or {})
                  for c in status.get("containerStatuses") or [])
    phase = status.get("phase", "")
    return PodSeen(t, pod["metadata"]["name"], (pod.get("spec") or {}).get("nodeName") or "",
                   phase, conditions.get("Initialized") == "True", running,
                   phase in ("Succeeded", "Failed"))


def pods_start(seen, start, boards):
    """From the watch's changes: (apply -> the first pod running, apply ->
    every board of `boards` running one (None when one never did), and per
    board the first pod that ran there: {"bound", "initialized", "running"},
    each seconds from `start` or None)."""
    first_running = None
    board_pod = {}
    for s in sorted(seen, key=lambda s: s.t):
        if s.running and s.node:
            if first_running is None:
                first_running = s.t - start
            board_pod.setdefault(s.node, s.name)
    per_board = {}
    for board, name in board_pod.items():
        mine = sorted((s for s in seen if s.name == name), key=lambda s: s.t)
        per_board[board] = {
            "bound": next((s.t - start for s in mine if s.node), None),
            "initialized": next((s.t - start for s in mine if s.node and s.initialized), None),
            "running": next((s.t - start for s in mine if s.running), None)}
    every = None
    if boards and all(b in per_board for b in boards):
        every = max(per_board[b]["running"] for b in boards)
    return first_running, every, per_board


def busy_span(samples, speed, threshold=0.5, hold=1.0):
    """When a board computed: `samples` its cgroup's CPU seconds, (t, s)
    pairs in time order; a window between two samples is busy when the
    board used at least `threshold` of its `speed` (cores) in it. Returns
    (from, until): the start of the first and the end of the last run of
    busy windows lasting `hold` seconds or more (shorter runs, a pod's
    start, are not computing); None when there is none."""
    runs = []
    current = None
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        if t1 <= t0:
            continue
        busy = (c1 - c0) / (t1 - t0) >= threshold * speed
        if busy:
            current = [t0, t1] if current is None else [current[0], t1]
        elif current is not None:
            runs.append(current)
            current = None
    if current is not None:
        runs.append(current)
    runs = [r for r in runs if r[1] - r[0] >= hold]
    if not runs:
        return None
    return runs[0][0], runs[-1][1]


def phases(start, end, spans, boards):
    """Where the makespan went, from each board's busy span (`spans`: board
    -> (from, until) or None): "computing_by" apply -> every board
    computing, "computing" -> the first board idle for good, "tail" -> the
    last board done, "finish" -> the end seen; the four add up to the
    makespan. When a board was done before the last one began (a late pod),
    every board never computed at once: "computing" is 0 and the tail runs
    from the last one's start. Each None when a board of `boards` never
    computed."""
    got = [spans.get(b) for b in boards]
    if not got or any(s is None for s in got):
        return {"computing_by": None, "computing": None, "tail": None, "finish": None}
    all_from = max(s[0] for s in got)
    first_idle = max(min(s[1] for s in got), all_from)
    last_done = max(s[1] for s in got)
    return {"computing_by": all_from - start, "computing": first_idle - all_from,
            "tail": last_done - first_idle, "finish": end - last_done}


def last_to_compute(spans, boards):
    """The board of `boards` that began computing last (None if none did)."""
    known = [(spans[b][0], b) for b in boards if spans.get(b)]
    return max(known)[1] if known else None


def pod_start_parts(per_board, board):
    """The start of `board`'s first pod as its status told it: (bound ->
    initialized: the sandbox and init containers; initialized -> a container
    running: the container's start). None where the watch did not see it."""
    pod = per_board.get(board) if board else None
    if not pod or None in (pod["bound"], pod["initialized"], pod["running"]):
        return None, None
    return pod["initialized"] - pod["bound"], pod["running"] - pod["initialized"]


_TIMES = re.compile(r"(\d+)m([\d.]+)s")


def _seconds(line):
    return sum(int(m) * 60 + float(s) for m, s in _TIMES.findall(line))


def items_cpu(lines, marker="@item "):
    """Each item's CPU seconds from a calibration pod's log: after each line
    `marker`NAME the shell's `times` printed two lines, its own time and
    then its children's so far (user and system). Returns (name -> the
    children's CPU since the item before, in the log's order; the total)."""
    each = {}
    total = 0.0
    for i, line in enumerate(lines):
        if line.startswith(marker) and i + 2 < len(lines):
            now = _seconds(lines[i + 2])
            each[line[len(marker):]] = max(0.0, now - total)
            total = max(total, now)
    return each, total


_PULLED = re.compile(r'^Successfully pulled image "[^"]*" in (\S+) \((\S+) including waiting\)')
_PRESENT = re.compile(r'^Container image "[^"]*" already present')


def pulled_text(message):
    """What a kubelet's Pulled event says of its image, short: "pulled in
    TIME (TIME with waiting)" or "present"; the message itself otherwise."""
    m = _PULLED.match(message)
    if m:
        return f"pulled in {m.group(1)} ({m.group(2)} with waiting)"
    return "present" if _PRESENT.match(message) else message


def _repository(ref):
    """A reference's repository's last part: ballast-worker of
    REGISTRY/ballast-io/ballast-worker:TAG or ...@sha256:..."""
    if ref.startswith("sha256:"):
        return ref
    last = ref.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def image_refs(listing, names):
    """Every reference of `ctr images ls` (its output, `listing`) to the
    images of `names`: the names themselves, any other name of their
    repository (another registry's or tag: an archive imported before under
    an older name may hold the same layer), and those with the same target
    digest, as the CRI plugin names a pulled image (by digest, REPO@sha256:,
    and by its ID, sha256:). The layer stays while one of them does."""
    repositories = {_repository(n) for n in names}
    rows = [line.split() for line in listing.splitlines()[1:] if len(line.split()) > 2]
    mine = {row[0] for row in rows
            if row[0] in names or (not row[0].startswith("sha256:")
                                   and _repository(row[0]) in repositories)}
    digests = {row[2] for row in rows if row[0] in mine}
    return [row[0] for row in rows if row[0] in mine or row[2] in digests]


# What a kubelet's FailedMount event says when the node authorizer refused a
# read of a new pod's claim, ConfigMap or Secret: the API server's graph of
# which pod is on which node had not yet taken in the pod (an upstream race,
# kubernetes/kubernetes#113429; on this two-core bed it happens to any kind of
# pod, and a refused PVC read costs the pod a retry about 10 s later).
AUTHORIZER_SIGNS = ("no relationship found between node",
                    "failed to sync secret cache", "failed to sync configmap cache")


def authorizer_refused(events, names):
    """The pods of `names` whose start the node authorizer refused, sorted,
    from the namespace's events (dicts as the API lists them)."""
    return sorted({e["involvedObject"]["name"] for e in events
                   if e["involvedObject"]["name"] in names and e.get("reason") == "FailedMount"
                   and any(sign in (e.get("message") or "") for sign in AUTHORIZER_SIGNS)})
