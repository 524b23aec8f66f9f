"""Reading what the metrics tests need: Prometheus text exposition, the
contract's tables in docs/metrics.md, and a few free loopback ports.

Everything here parses text a process or a person wrote; errors name the
line and what was expected.
"""

import re
import socket
import urllib.request

MAX_SCRAPE_BYTES = 16 << 20
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}
# Labels a family's type adds to its samples.
TYPE_LABELS = {"le", "quantile"}
# Labels Prometheus gives every scraped series itself: an exposed series that
# has one of its own loses it to the target's, or needs honor_labels.
TARGET_LABELS = {"job", "namespace", "instance"}


class Family:
    """One metric family as exposed: its type and the label names of its samples."""

    def __init__(self, name, type_):
        self.name = name
        self.type = type_
        self.labels = set()

    def __repr__(self):
        return f"{self.name} {self.type} {{{','.join(sorted(self.labels))}}}"


LABEL_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse_labels(text, where):
    """The label names of a sample's {a="x",b="y"} body."""
    names = set()
    pos = 0
    while pos < len(text):
        match = LABEL_RE.match(text, pos)
        if not match:
            raise ValueError(f"{where}: expected name=\"value\" at {text[pos:pos + 40]!r}")
        names.add(match.group(1))
        pos = match.end()
    return names


def parse_exposition(text, source="scrape"):
    """Families by name from Prometheus text format 0.0.4."""
    families = {}
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{source} line {number}"
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) != 4:
                raise ValueError(f"{where}: expected '# TYPE name type', got {line!r}")
            families[parts[2]] = Family(parts[2], parts[3])
            continue
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition("{")
        if rest:
            body, close, _ = rest.rpartition("}")
            if not close:
                raise ValueError(f"{where}: a '{{' without '}}': {line!r}")
            labels = parse_labels(body, where)
        else:
            name = line.split()[0]
            labels = set()
        family = family_of(name, families)
        if family is None:
            raise ValueError(f"{where}: sample {name} has no # TYPE line before it")
        family.labels |= labels - TYPE_LABELS
    return families


def samples(text, name):
    """(labels, value) of each sample `name` in `text`: labels a dict of
    name -> value (escapes kept as written), value a float."""
    out = []
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, _, rest = line.partition("{")
        labels = {}
        if head == name and rest:
            body, _, tail = rest.rpartition("}")
            labels = dict(LABEL_RE.findall(body))
        else:
            tail = line[len(name):]
        out.append((labels, float(tail.split()[0])))
    return out


def family_of(sample, families):
    if sample in families:
        return families[sample]
    for family in families.values():
        for suffix in SUFFIXES.get(family.type, ()):
            if sample == family.name + suffix:
                return family
    return None


def scrape(url, timeout=2.0):
    """The body of GET url, or None when it cannot be had."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read(MAX_SCRAPE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


ROW_RE = re.compile(r"^\| `(ballast_[a-z0-9_]+)` \| (\w+) \| ([^|]*) \| [^|]* \| (\w+) \|")


def read_contract(path):
    """The documented families of docs/metrics.md: name -> (type, labels, exporter)."""
    contract = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.startswith("| `ballast_"):
                continue
            match = ROW_RE.match(line)
            if not match:
                raise ValueError(
                    f"{path} line {number}: expected | `name` | type | labels | unit | exporter |")
            name, type_, labels, exporter = match.groups()
            names = {label.strip() for label in labels.split(",")} - {"—", ""}
            if name in contract:
                raise ValueError(f"{path} line {number}: {name} is listed twice")
            contract[name] = (type_, names, exporter)
    if not contract:
        raise ValueError(f"{path}: no series table found")
    return contract


def compare(contract, seen, exporters):
    """Differences between the contract's families of `exporters` and those seen.

    Returns a list of messages, empty when they agree both ways.
    """
    problems = []
    for name, family in sorted(seen.items()):
        if not name.startswith("ballast_"):
            continue
        if name not in contract:
            problems.append(f"{name} is exposed but not listed in docs/metrics.md")
            continue
        type_, labels, exporter = contract[name]
        if exporter not in exporters:
            problems.append(f"{name} is exposed by {'/'.join(exporters)}, listed for {exporter}")
        if family.type != type_:
            problems.append(f"{name}: exposed as {family.type}, listed as {type_}")
        if family.labels != labels:
            problems.append(f"{name}: exposed with labels {sorted(family.labels)}, "
                            f"listed with {sorted(labels)}")
        clashing = sorted(family.labels & TARGET_LABELS)
        if clashing:
            problems.append(f"{name}: carries {', '.join(clashing)}, which a scrape sets "
                            "itself (docs/metrics.md, \"Labels\")")
    for name, (_, _, exporter) in sorted(contract.items()):
        if exporter in exporters and name not in seen:
            problems.append(f"{name} is listed for {exporter} but was not exposed")
    return problems


def free_ports(count):
    """A base port P such that P .. P+count-1 are free on 127.0.0.1 now."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        taken = False
        for port in range(base, base + count):
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    taken = True
                    break
        if not taken:
            return base
    raise RuntimeError(f"no {count} consecutive free ports on 127.0.0.1")
