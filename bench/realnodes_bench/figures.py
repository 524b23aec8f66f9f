"""The bench's arithmetic, pure: how the Indexed Job's bins are packed and
its pods' CPU request sized, the oracle's split and the lower bound that
indivisible items impose, the bracket rule that keeps or discards a round,
and the paired per-round ratios. No I/O; tests/bench/realnodes_figures_test.py
checks each."""
import statistics

# A round is discarded when its two oracle runs differ by more than this
# (the larger over the smaller, minus 1).
BRACKET_TOLERANCE = 0.05


def median(values):
    """The median of a non-empty sequence of numbers; None when it is empty."""
    values = list(values)
    return statistics.median(values) if values else None


def pack_by_size(items, weights):
    """The items, (cost, name) pairs, packed into one bin per key of
    `weights` (name -> weight): largest first, each into the bin it leaves
    least loaded for its weight ((load + cost) / weight; the first such bin
    in `weights`' order on a tie). Equal weights: the lightest bin, as a user
    packing by known sizes would; the boards' speeds: where it ends soonest.
    Returns bin name -> the item names in the order they were put there."""
    load = {name: 0.0 for name in weights}
    bins = {name: [] for name in weights}
    for cost, name in sorted(items, key=lambda item: -item[0]):
        target = min(weights, key=lambda b: (load[b] + cost) / weights[b])
        load[target] += cost
        bins[target].append(name)
    return bins


def split_by_count(names, count):
    """The names cut into `count` runs of equal numbers in their order (the
    naive cut): run i holds names[len * i // count : len * (i + 1) // count]."""
    n = len(names)
    return [names[n * i // count:n * (i + 1) // count] for i in range(count)]


def cpu_request(allocatable_cores, per_node):
    """The CPU request (millicores, as Kubernetes writes it) with which
    `per_node` pods of a Job fit on a board of `allocatable_cores` at once
    and `per_node` + 1 do not: 50 m under an even share, or just over a
    share of `per_node` + 1 where that margin would let one more fit (4 and
    more a board)."""
    millis = allocatable_cores * 1000
    request = millis // per_node - 50
    if (per_node + 1) * request <= millis:
        request = millis // (per_node + 1) + 1
    return f"{request}m"


def oracle_split(costs, speeds):
    """The oracle's deal: `costs` (item -> its CPU seconds on one core) dealt
    largest first, each to the board of `speeds` (board -> cores) that would
    finish it earliest at its speed (the first such board in `speeds`' order
    on a tie). Returns (board -> its items in the order dealt, board -> its
    CPU seconds, the planned makespan: the largest CPU over speed)."""
    load = {board: 0.0 for board in speeds}
    lists = {board: [] for board in speeds}
    for item, cost in sorted(costs.items(), key=lambda kv: (-kv[1], kv[0])):
        board = min(speeds, key=lambda b: (load[b] + cost) / speeds[b])
        load[board] += cost
        lists[board].append(item)
    planned = max(load[b] / speeds[b] for b in speeds) if speeds else 0.0
    return lists, load, planned


def lower_bound(costs, speeds):
    """The makespan no split of indivisible items reaches under: the
    largest of the work over the summed speeds, and, for every k up to the
    boards and the items, the k largest items over the k fastest boards
    (k = 1: the largest item on the fastest board). Returns (bound, its
    parts: {"work": W / sum s, "k=1": ..., ...})."""
    costs = sorted(costs, reverse=True)
    speeds = sorted(speeds, reverse=True)
    parts = {"work": sum(costs) / sum(speeds)}
    for k in range(1, min(len(costs), len(speeds)) + 1):
        parts[f"k={k}"] = sum(costs[:k]) / sum(speeds[:k])
    return max(parts.values()), parts


def equal_chunks(speeds, slack=0.02, most=48):
    """How many equal shares of a finely divisible job (primes) to deal to
    the boards of `speeds` (cores) so that the deal comes within `slack` of
    the work over the summed speeds: the smallest count from the number of
    boards on, up to `most`. 0.5, 0.5, 0.2 cores: 12 (5, 5 and 2 shares)."""
    best = None
    for count in range(len(speeds), most + 1):
        costs = {i: 1.0 / count for i in range(count)}
        _, _, planned = oracle_split(costs, dict(enumerate(speeds)))
        ideal = 1.0 / sum(speeds)
        if planned <= ideal * (1 + slack):
            return count
        if best is None or planned < best[1]:
            best = (count, planned)
    return best[0]


def bracket_spread(before, after):
    """How far a round's two oracle runs lie apart: the larger over the
    smaller, minus 1."""
    return max(before, after) / min(before, after) - 1


def bracket_kept(before, after, tolerance=BRACKET_TOLERANCE):
    """Whether a round is kept: its two oracle runs within `tolerance` (5 %
    apart is kept, whatever the floating point says of 105 / 100 - 1)."""
    return bracket_spread(before, after) <= tolerance + 1e-9


def kept_count(rounds):
    """How many of the rounds run so far are kept."""
    return sum(1 for r in rounds if r["kept"])


def enough_rounds(rounds, kept, most):
    """Whether to stop: `most` rounds run, or (with `kept`, else None) that
    many of them kept."""
    return len(rounds) >= most or (kept is not None and kept_count(rounds) >= kept)


def short_of_kept(rounds, kept):
    """Whether the rounds run kept fewer than `kept` (None: no such aim)."""
    return kept is not None and kept_count(rounds) < kept


def reference(before, after):
    """The round's reference makespan: the mean of its two oracle runs."""
    return (before + after) / 2


def run_reference(round_, key):
    """(reference makespan, kept) that run `key` of `round_` is paired
    with: the mean of the two oracle runs either side of it
    (round_["refs"][key]), or, in a round of one bracket, the round's own
    ("makespans"["oracle"], "kept")."""
    refs = round_.get("refs") or {}
    if key in refs:
        return refs[key]
    return round_["makespans"]["oracle"], round_["kept"]


def paired(rounds, key, against):
    """Per kept round, the run `key`'s makespan over the run `against`'s in
    the same round (`against` "oracle": the run's reference, run_reference,
    left out where its bracket was not kept). `rounds` are dicts with
    "kept", "makespans" (key -> seconds, with "oracle" the WeightedJob's
    reference) and optionally "refs". Returns the ratios, in round order;
    rounds missing either run are left out."""
    ratios = []
    for round_ in rounds:
        runs = round_["makespans"]
        if not round_["kept"] or key not in runs:
            continue
        if against == "oracle":
            reference, kept = run_reference(round_, key)
            if kept:
                ratios.append(runs[key] / reference)
        elif against in runs:
            ratios.append(runs[key] / runs[against])
    return ratios


def every_bracket(rounds, key):
    """Run `key`'s makespan over its reference (run_reference) in every
    round that ran it, kept or discarded, in round order. Information only:
    a discarded round's two oracle runs lie more than 5 % apart, so its
    ratio holds the bed's move as much as the run's; the targets are judged
    on the kept rounds (paired)."""
    return [round_["makespans"][key] / run_reference(round_, key)[0]
            for round_ in rounds if key in round_["makespans"]]


def recovered(rounds, key, by="weighted"):
    """Per kept round where run `key` lost to the oracle (took longer than
    its reference), the share of that loss the run `by` did not lose:
    (key - by) / (key - oracle), each over its own reference. 1 when `by`
    matched the oracle, above 1 when it beat it, below 0 when it was slower
    than `key`. Rounds missing either run, or either's bracket, are left
    out."""
    shares = []
    for round_ in rounds:
        runs = round_["makespans"]
        if not round_["kept"] or key not in runs or by not in runs:
            continue
        (key_ref, key_kept), (by_ref, by_kept) = (run_reference(round_, k) for k in (key, by))
        if not (key_kept and by_kept):
            continue
        if key_ref == by_ref:  # one reference: in seconds, as the ratios would say
            loss, gain = runs[key] - key_ref, runs[key] - runs[by]
        else:
            loss, gain = runs[key] / key_ref - 1, runs[key] / key_ref - runs[by] / by_ref
        if loss > 0:
            shares.append(gain / loss)
    return shares


def summary(ratios):
    """(minimum, median) of paired ratios; (None, None) when there are none."""
    if not ratios:
        return None, None
    return min(ratios), median(ratios)


def spread(values):
    """Round to round: (largest - smallest) / median; None under two values."""
    values = list(values)
    if len(values) < 2:
        return None
    return (max(values) - min(values)) / median(values)


def waste_shares(rounds, key, work):
    """Per kept round, the CPU of run `key`'s copies that lost ("lost", CPU
    seconds) and of its boards after the end was seen ("after_end") over the
    work's CPU on one core (a pooled round's own run's, else `work`); rounds
    whose run has neither figure are left out."""
    shares = []
    for round_ in rounds:
        run = round_["runs"].get(key) if round_["kept"] else None
        if not run or (run.get("lost") is None and run.get("after_end") is None):
            continue
        shares.append(((run.get("lost") or 0) + (run.get("after_end") or 0))
                      / round_.get("work", work))
    return shares


def best_by_median(ratios_by_key):
    """The key whose paired ratios have the smallest median (the Indexed
    Job's best tuning), among keys with at least one; None when none has."""
    medians = {key: median(r) for key, r in ratios_by_key.items() if r}
    return min(medians, key=lambda key: medians[key]) if medians else None
