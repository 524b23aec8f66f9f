"""The bench's tables, pure: a row per run kind (the oracle, the
WeightedJob, each Indexed Job tuning), its figures over the kept rounds.
No I/O; tests/bench/realnodes_figures_test.py checks the layout."""
import math

from .figures import (BRACKET_TOLERANCE, best_by_median, bracket_spread, every_bracket, median,
                      paired, recovered, run_reference, spread, summary, waste_shares)

# (title, width, format) of the figures table's columns after the label.
FIGURES = [
    ("makespan", 9, ".2f"),
    ("1st pod", 8, ".2f"),
    ("all pods", 9, ".2f"),
    ("limit", 8, ".2f"),
    ("efficiency", 10, ".3f"),
    ("/oracle min", 11, ".3f"),
    ("/oracle med", 11, ".3f"),
    ("vs WJ", 7, ".2fx"),
    ("CPU/work", 9, ".3f"),
    ("busy", 6, ".3f"),
]
# The where-it-went table's columns.
WHERE = [
    ("computing by", 12, ".2f"),
    ("init", 6, ".2f"),
    ("c.start", 7, ".2f"),
    ("computing", 9, ".2f"),
    ("tail", 6, ".2f"),
    ("finish", 6, ".2f"),
    ("boards CPU", 10, ".2f"),
    ("after end", 9, ".2f"),
    ("work CPU", 8, ".2f"),
    ("commands", 8, ".2f"),
    ("workers' own", 12, ".2f"),
    ("lost copies", 11, ".2f"),
    ("operator CPU", 12, ".2f"),
    ("ctl plane CPU", 13, ".2f"),
]
LABEL_WIDTH = 42


def cell(value, width, spec):
    """A value right-aligned in `width`: "-" for None; a spec ending in "x"
    prints the number then "x"."""
    if value is None:
        return "-".rjust(width)
    if spec.endswith("x"):
        return (format(value, spec[:-1]) + "x").rjust(width)
    return format(value, spec).rjust(width)


def table(title, columns, rows, last=None):
    """Lines of a table: `title` over the labels, then each column's title;
    `rows` are (label, [values in the columns' order], last text or None);
    `last` the title of a free text column at the end (each run's values)."""
    head = title.ljust(LABEL_WIDTH) + "".join(" " + name.rjust(width)
                                              for name, width, _ in columns)
    if last:
        head += "  " + last
    lines = [head]
    for label, values, text in rows:
        line = label.ljust(LABEL_WIDTH) + "".join(
            " " + cell(v, width, spec) for v, (_, width, spec) in zip(values, columns))
        if text:
            line += "  " + text
        lines.append(line)
    return lines


def runs_text(values):
    """A run's makespan in each round, "a, b, c" (a discarded round's in
    brackets)."""
    return ", ".join(f"[{v:.2f}]" if discarded else f"{v:.2f}" for v, discarded in values)


def indexed_label(split, completions, per_node, workload):
    """How the tables name an Indexed Job tuning SPLIT:COMPLETIONS:PER_NODE."""
    cut = "equal counts" if split == "count" else "equal cost"
    if split == "cost" and workload != "primes":
        # Packed by the declared costs: the files' sizes, or the tests' past durations.
        cut = "packed by past duration" if workload == "testsuite" else "packed by size"
    return f"Indexed Job, {completions} x {cut}, {per_node}/board"


def percent(value):
    return "-" if value is None else f"{value * 100:.1f} %"


def ratio_text(low, mid):
    return "-" if mid is None else f"{mid:.3f} (min {low:.3f})"


def _used(rounds):
    """The rounds the figures are taken over: the kept ones, or every round
    when none was kept (its ratios to the oracle are then left out)."""
    kept = [r for r in rounds if r["kept"]]
    return kept or list(rounds)


def _runs(rounds, key):
    """The figures of every run of `key` in `rounds` (the oracle: both
    runs of each bracket)."""
    if key == "oracle":
        return [f for r in rounds for f in r["oracle"]]
    return [r["runs"][key] for r in rounds if key in r["runs"]]


def _median(runs, field):
    values = [f.get(field) for f in runs]
    values = [v for v in values if v is not None]
    return median(values) if values else None


def _cpu_over_work(rounds, key, one_core):
    """The median of each run's boards' CPU over its round's work (a pooled
    round's own run's, else `one_core`)."""
    ratios = [f["boards_cpu"] / r.get("work", one_core) for r in rounds for f in _runs([r], key)]
    return median(ratios)


def figure_rows(rounds, keys, labels, one_core, total_speed):
    """The figures table's rows: the oracle's, then each of `keys` (the
    WeightedJob's "weighted", the Indexed Job's variants); `labels` key ->
    label. Makespans and the other columns are medians over the kept rounds;
    /oracle and vs WJ are medians of per-round paired ratios."""
    used = _used(rounds)
    limit = one_core / total_speed
    rows = []
    for key in ["oracle", *keys]:
        runs = _runs(used, key)
        makespans = [r["makespans"][key] for r in used if key in r["makespans"]]
        makespan = median(makespans) if makespans else None
        low, mid = (None, None) if key == "oracle" else summary(paired(rounds, key, "oracle"))
        vs_wj = median(paired(rounds, key, "weighted")) if key != "oracle" else None
        cpu_work = _cpu_over_work(used, key, one_core)
        values = [makespan, _median(runs, "first_pod"), _median(runs, "all_pods"), limit,
                  limit / makespan if makespan else None, low, mid, vs_wj, cpu_work,
                  _median(runs, "busy")]
        if key == "oracle":
            text = ", ".join(("{}" if r["kept"] else "[{}]").format(
                "/".join(f"{f['makespan']:.2f}" for f in r["oracle"])) for r in rounds)
        else:
            text = runs_text([(r["makespans"][key], not (r["kept"] and run_reference(r, key)[1]))
                              for r in rounds if key in r["makespans"]])
        rows.append((labels[key], values, text))
    return rows


def where_rows(rounds, keys, labels, one_core):
    """The where-it-went table's rows: medians over the kept rounds."""
    used = _used(rounds)
    rows = []
    for key in ["oracle", *keys]:
        runs = _runs(used, key)
        values = [_median(runs, f) for f in ("computing_by", "init", "cstart", "computing",
                                            "tail", "finish", "boards_cpu", "after_end")]
        values += [one_core] + [_median(runs, f) for f in ("commands", "own", "lost",
                                                           "operator_cpu", "control_cpu")]
        rows.append((labels[key], values, None))
    return rows


def workload_report(name, rounds, keys, labels, one_core, total_speed):
    """Every line printed after a workload's rounds: the two tables, what
    their columns mean, and the paired summary."""
    lines = [""]
    lines += table("run (rounds interleaved), medians", FIGURES,
                   figure_rows(rounds, keys, labels, one_core, total_speed), "each run, s")
    lines += [
        "(oracle: its runs of each round, before the WeightedJob, between it and the Indexed",
        " Jobs and after them; a round in brackets was discarded, its two oracle runs around the",
        f" WeightedJob more than {BRACKET_TOLERANCE * 100:.0f} % apart, and a run in brackets "
        "is left out so;",
        " /oracle: each kept run's makespan over the mean of the two oracle runs either side of",
        " it, min and median; vs WJ: over the WeightedJob's in the same round, median;",
        " limit: the work's CPU on one core over the boards' summed speeds;",
        " efficiency: limit / makespan;",
        " CPU/work: the boards' CPU seconds for the run over the work's CPU on one core;",
        " busy: the boards' CPU seconds over their cores' seconds from apply to finish)",
        ""]
    lines += table("where the time and CPU went, medians, s", WHERE,
                   where_rows(rounds, keys, labels, one_core))
    lines += [
        "(computing by: apply -> every board computing (its cgroup using half its quota or",
        " more); init, c.start: of it, the last board's first pod from bound to initialized",
        " (sandbox and init containers) and from initialized to its container running, as its",
        " status said; computing: -> the first board idle for good (0 when one was done before",
        " the last began); tail: -> the last board done; finish: -> the end seen;",
        " boards CPU: their pods' cgroups, apply -> every pod gone; after end: of it, after the",
        " end was seen; work CPU: the items on one core; commands, workers' own: what the",
        " WeightedJob's workers said their commands and they spent; lost copies: the CPU of",
        " their busy seconds on items another board handed in first or still under way at",
        " the end, at their board's cores; operator CPU: the control-plane",
        " node's pods; ctl plane CPU: the API server, datastore, controller-manager, scheduler,",
        " DNS and that node's kubelet and containerd)"]
    kept = [r for r in rounds if r["kept"]]
    for r in rounds:
        before, after = r["oracle"][0]["makespan"], r["oracle"][1]["makespan"]
        if not r["kept"]:
            lines.append(f"{name}: round {r['round']} discarded: its oracle took {before:.2f} and "
                         f"{after:.2f} s around the WeightedJob "
                         f"({bracket_spread(before, after) * 100:.1f} % apart)")
        elif len(r["oracle"]) > 2 and not all(run_reference(r, k)[1] for k in keys):
            before, after = r["oracle"][1]["makespan"], r["oracle"][2]["makespan"]
            lines.append(f"{name}: round {r['round']}, the Indexed Jobs left out: the oracle took "
                         f"{before:.2f} and {after:.2f} s around them "
                         f"({bracket_spread(before, after) * 100:.1f} % apart)")
    ratios = paired(rounds, "weighted", "oracle")
    low, mid = summary(ratios)
    indexed = {k: paired(rounds, k, "oracle") for k in keys if k != "weighted"}
    best = best_by_median(indexed)
    text = f"{name}: over {len(kept)} kept round(s) of {len(rounds)}, the WeightedJob at "
    text += ratio_text(low, mid) + (f", worst {max(ratios):.3f}," if ratios else "")
    text += " of the oracle's makespan"
    if best:
        b_low, b_mid = summary(indexed[best])
        text += f", the best Indexed Job ({labels[best]}) at {ratio_text(b_low, b_mid)}"
        shares = recovered(rounds, best)
        if shares:
            text += (f"; of that Job's loss to the oracle the WeightedJob recovered "
                     f"{median(shares) * 100:.0f} % (median of the rounds; "
                     f"{min(shares) * 100:.0f} % the least)")
    lines.append(text)
    every = every_bracket(rounds, "weighted")
    if len(every) > len(ratios):
        lines.append(f"{name}: against its bracket in every round, discarded ones too "
                     f"(information: those moved more than 5 %), the WeightedJob at "
                     f"{min(every):.3f} to {max(every):.3f}, median {median(every):.3f}")
    weighted = [r["makespans"]["weighted"] for r in kept if "weighted" in r["makespans"]]
    lines.append(f"{name}: round to round the WeightedJob's makespan moved "
                 f"{percent(spread(weighted))}, the oracle's "
                 f"{percent(spread(r['makespans']['oracle'] for r in kept))}")
    waste = waste_shares(rounds, "weighted", one_core)
    if waste:
        lines.append(f"{name}: the WeightedJob's CPU on copies that lost and after the end, "
                     f"{median(waste) * 100:.1f} % of the work in the median kept round, "
                     f"{max(waste) * 100:.1f} % at most (target 3 %)")
    return lines


def si_bytes(count):
    """A count of bytes as `numfmt --to=si --suffix=B` writes it: powers of
    1000, rounded away from zero, one decimal below 10 (21093000: "22MB",
    1049: "1.1KB", 999: "999B")."""
    units = ["", "K", "M", "G", "T", "P", "E"]
    value, unit = float(count), 0
    while abs(value) >= 1000 and unit < len(units) - 1:
        value, unit = value / 1000, unit + 1
    if unit == 0:
        return f"{int(count)}B"
    if value < 10:
        tenths = math.ceil(round(value * 10, 9)) / 10
        if tenths < 10:
            return f"{tenths:.1f}{units[unit]}B"
        value = tenths
    whole = math.ceil(round(value, 9))
    if whole >= 1000 and unit < len(units) - 1:
        return f"1.0{units[unit + 1]}B"
    return f"{whole}{units[unit]}B"


PULL_KINDS = {"cold": "worker image pulled on every board:", "present": "worker image present:"}


def pull_run_line(round_, kind, first, every, took, phase):
    """One --pull-start run: apply -> the first pod Running, -> every board's."""
    return (f"  round {round_}, {kind + ':':<8} apply -> 1st pod Running {first:5.2f} s, "
            f"every board {every:5.2f} s (job {took:.2f} s, {phase})")


def pull_summary(firsts, alls):
    """The --pull-start medians, a line per kind: `firsts` and `alls` map
    "cold" and "present" to each run's seconds (as printed: to 0.01 s)."""
    lines = []
    for kind, label in PULL_KINDS.items():
        first = [round(v, 2) for v in firsts[kind]]
        every = [round(v, 2) for v in alls[kind]]
        lines.append(f"{label:<40} 1st pod {median(first):5.2f} s, every board "
                     f"{median(every):5.2f} s (medians of {len(every)}; every board: "
                     + " ".join(f"{v:.2f}" for v in every) + ")")
    return lines
