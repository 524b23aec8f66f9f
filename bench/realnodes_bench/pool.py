"""Rounds kept across runs of the bench. With --keep DIR, a run writes
DIR/WORKLOAD/rounds.json after every round (what the figures are made of:
each round's runs, its oracle's bracket, the work, the boards, the commit);
`--pool` reads several such files and reports their rounds as one run's.
A round's figures never depend on another round's, so rounds of two runs of
the same code pool as rounds of one: on a bed whose speed wanders, kept
rounds come a few a run, and the targets need three.

The file is the bench's own, but it may be edited, cut short or swapped:
load() reads at most MOST_BYTES and checks every field the tables read,
naming the file and the field when one is wrong. No I/O beyond the file."""
import json
import math
import os
import pathlib

from .figures import median

FORMAT = 1
FILE_NAME = "rounds.json"
MOST_BYTES = 16 << 20
MOST_ROUNDS = 1000


class PoolError(Exception):
    """A rounds file that cannot be pooled: which file, which field, why."""


def record(workload, commit, started, work, total_speed, keys, labels, rounds):
    """What a run writes: its rounds and what they were run on."""
    return {"format": FORMAT, "workload": workload, "commit": commit, "started": started,
            "work": work, "total_speed": total_speed, "keys": list(keys),
            "labels": dict(labels), "rounds": rounds}


def save(path, rec):
    """Writes `rec` to `path` whole or not at all (a run killed mid-write
    leaves the rounds before)."""
    path = pathlib.Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(rec, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(partial, path)


def files(paths):
    """The rounds files that `paths` name: a file as it is; a directory's
    own rounds.json, else each of its workloads' (DIR/*/rounds.json, sorted).
    Raises PoolError for a path that names none."""
    found = []
    for path in map(pathlib.Path, paths):
        if path.is_dir():
            inside = ([path / FILE_NAME] if (path / FILE_NAME).is_file()
                      else sorted(path.glob(f"*/{FILE_NAME}")))
            if not inside:
                raise PoolError(f"{path}: no {FILE_NAME} in it or in its workloads' directories "
                                "(a run writes one with --keep)")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise PoolError(f"{path}: no such file or directory")
    return found


def _fail(where, expected, value):
    shown = json.dumps(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    raise PoolError(f"{where}: expected {expected}, found {shown}")


def _number(value, where, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(where, "a number", value)
    if positive and value <= 0:
        _fail(where, "a number above 0", value)
    return value


def _text(value, where):
    if not isinstance(value, str) or not value:
        _fail(where, "a string", value)
    return value


def _object(value, where):
    if not isinstance(value, dict):
        _fail(where, "an object", value)
    return value


def _list(value, where, least=0, most=MOST_ROUNDS):
    if not isinstance(value, list) or not least <= len(value) <= most:
        _fail(where, f"a list of {least} to {most}", value)
    return value


# A run's figures that the tables read beside its makespan and boards' CPU:
# numbers, or null where a run lacks one (the oracle's workers' CPU, say).
# Its other fields (the result, the pods the authorizer refused) are kept as
# they were and never read here.
FIGURES = ("first_pod", "all_pods", "busy", "computing_by", "init", "cstart", "computing",
           "tail", "finish", "after_end", "commands", "own", "lost", "operator_cpu",
           "control_cpu")


def _run(run, where):
    _object(run, where)
    for field in ("makespan", "boards_cpu"):
        _number(run.get(field), f"{where}.{field}", positive=field == "makespan")
    for field in FIGURES:
        if run.get(field) is not None:
            _number(run[field], f"{where}.{field}")


def _round(round_, where, keys):
    _object(round_, where)
    if not isinstance(round_.get("kept"), bool):
        _fail(f"{where}.kept", "true or false", round_.get("kept"))
    for i, run in enumerate(_list(round_.get("oracle"), f"{where}.oracle", 2, 3)):
        _run(run, f"{where}.oracle[{i}]")
    runs = _object(round_.get("runs"), f"{where}.runs")
    makespans = _object(round_.get("makespans"), f"{where}.makespans")
    _number(makespans.get("oracle"), f"{where}.makespans.oracle", positive=True)
    for key, run in runs.items():
        if key not in keys:
            _fail(f"{where}.runs", f"runs of {', '.join(keys)}", key)
        _run(run, f"{where}.runs.{key}")
    for key in makespans:
        if key != "oracle" and key not in runs:
            _fail(f"{where}.makespans", "a makespan for each run of the round", key)
    for key in runs:
        _number(makespans.get(key), f"{where}.makespans.{key}", positive=True)
    for key, ref in _object(round_.get("refs", {}), f"{where}.refs").items():
        if (key not in keys or not isinstance(ref, list) or len(ref) != 2
                or not isinstance(ref[1], bool)):
            _fail(f"{where}.refs.{key}", "[reference seconds, kept] of a run", ref)
        _number(ref[0], f"{where}.refs.{key}[0]", positive=True)


def load(path):
    """A rounds file read and checked; raises PoolError naming the file and
    the field that is wrong."""
    path = pathlib.Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MOST_BYTES + 1)
    except OSError as error:
        raise PoolError(f"{path}: {error.strerror}") from None
    if len(data) > MOST_BYTES:
        raise PoolError(f"{path}: larger than {MOST_BYTES >> 20} MiB, not a rounds file")
    try:
        rec = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError) as error:
        raise PoolError(f"{path}: not JSON ({type(error).__name__})") from None
    except json.JSONDecodeError as error:
        raise PoolError(f"{path}: not JSON, line {error.lineno} column {error.colno}: "
                        f"{error.msg}") from None
    try:
        _check(rec)
    except PoolError as error:
        raise PoolError(f"{path}: {error}") from None
    return rec


def _check(rec):
    _object(rec, "the file")
    if rec.get("format") != FORMAT:
        _fail("format", f"{FORMAT} (a rounds file of this bench)", rec.get("format"))
    for field in ("workload", "commit", "started"):
        _text(rec.get(field), field)
    for field in ("work", "total_speed"):
        _number(rec.get(field), field, positive=True)
    keys = _list(rec.get("keys"), "keys", 1, 64)
    if keys[0] != "weighted" or not all(isinstance(k, str) and k for k in keys):
        _fail("keys", '"weighted" then the Indexed Job\'s tunings', keys)
    labels = _object(rec.get("labels"), "labels")
    for key in ["oracle", *keys]:
        _text(labels.get(key), f"labels.{key}")
    for i, round_ in enumerate(_list(rec.get("rounds"), "rounds", 1)):
        _round(round_, f"rounds[{i}]", keys)


def merge(records):
    """The records (with their file names, (name, record) pairs) grouped by
    workload, in the order first seen: for each, its keys (every tuning
    any run ran, in order), labels, the work (the median of the runs'), the
    boards' summed speed, the rounds renumbered 1, 2, ... with each round's
    own work, and the sources (name, record, first and last round number).
    Raises PoolError when two runs of a workload ran on boards of another
    summed speed (another bed)."""
    pooled = {}
    for name, rec in records:
        entry = pooled.setdefault(rec["workload"], {
            "keys": [], "labels": {}, "works": [], "total_speed": rec["total_speed"],
            "rounds": [], "sources": [], "first": name})
        if not math.isclose(entry["total_speed"], rec["total_speed"], rel_tol=1e-9):
            raise PoolError(f"{name}: its boards' speeds sum to {rec['total_speed']:g} cores, "
                            f"{entry['first']}'s to {entry['total_speed']:g}: not the same bed")
        entry["keys"] += [k for k in rec["keys"] if k not in entry["keys"]]
        entry["labels"].update(rec["labels"])
        entry["works"].append(rec["work"])
        first = len(entry["rounds"]) + 1
        for round_ in rec["rounds"]:
            round_ = dict(round_, round=len(entry["rounds"]) + 1, work=rec["work"])
            entry["rounds"].append(round_)
        entry["sources"].append((name, rec, first, len(entry["rounds"])))
    for entry in pooled.values():
        entry["work"] = median(entry.pop("works"))
        entry.pop("first")
    return pooled


def sources_lines(workload, sources):
    """Where a pooled report's rounds came from, a line a run, and a warning
    line when the runs were of different commits."""
    lines = [f"{workload}: rounds {first}-{last} from {name} (commit {rec['commit']}, "
             f"started {rec['started']}, work {rec['work']:.2f} CPU s on one core)"
             for name, rec, first, last in sources]
    commits = {rec["commit"] for _, rec, _, _ in sources}
    if len(commits) > 1:
        lines.append(f"{workload}: the runs are of {len(commits)} commits "
                     f"({', '.join(sorted(commits))}): their rounds pool only where the "
                     "WeightedJob's code is the same in each")
    return lines
