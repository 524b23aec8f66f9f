#!/usr/bin/env python3
"""Checks every quoted #include of the source tree against DEVELOPERS.md's
table "Which folder may include which", and that the folders of core/ include
each other without a cycle.

  include_rules.py REPO_ROOT

Exits 1 naming each include that breaks the table (file, line, what it
includes, what its folder may include) and each cycle; 0 when none does.
"""
import collections
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
HEADING = "## Which folder may include which"


def read_table(root):
    text = (root / "DEVELOPERS.md").read_text(encoding="utf-8")
    if HEADING not in text:
        sys.exit(f"include_rules: DEVELOPERS.md has no section '{HEADING}'")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rules = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`")
        if cells[1] == "every folder":
            rules[folder] = None
        else:
            rules[folder] = {c.strip().strip("`") for c in cells[1].split(",") if c.strip() not in ("—", "")}
    if not rules:
        sys.exit("include_rules: the table in DEVELOPERS.md has no rows")
    return rules


def folder_of(path):
    """The table's name for a repository path: core/<x> for core, else the top folder."""
    parts = pathlib.PurePosixPath(path).parts
    if len(parts) < 2:
        return None
    return "/".join(parts[:2]) if parts[0] == "core" else parts[0]


def rule_of(rules, folder):
    """What `folder` may include: a set of folders, None for every folder, or
    False when the table has no row for it."""
    if folder in rules:
        return rules[folder]
    if folder.startswith("core/") and "core" in rules:
        return rules["core"]
    return False


def allowed(rule, source, target):
    """Whether `source`, whose rule is `rule`, may include folder `target`."""
    if rule is None or source == target:
        return True
    return target in rule or (target.startswith("core/") and "core" in rule)


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    rules = read_table(root)
    # Build directories (a CMakeCache.txt) and hidden ones hold no source of ours.
    skipped = {d.name for d in root.iterdir()
               if d.is_dir() and (d.name.startswith(".") or (d / "CMakeCache.txt").exists())}
    problems = []
    core_edges = collections.defaultdict(set)
    sources = [p for d in sorted(root.iterdir()) if d.is_dir() and d.name not in skipped
               for p in sorted(d.rglob("*"))]
    for path in sources:
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        source = folder_of(rel)
        if source is None:
            continue
        rule = rule_of(rules, source)
        if rule is False:
            problems.append(f"{rel}: its folder {source} has no row in the table")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or "/" not in match.group(1):
                continue
            target = folder_of(match.group(1))
            if target is None:
                continue
            if not allowed(rule, source, target):
                problems.append(f"{rel}:{number}: includes {match.group(1)}, but {source} may include "
                                f"only {', '.join(sorted(rule)) or 'nothing of ours'}")
            if source.startswith("core/") and target.startswith("core/") and source != target:
                core_edges[source].add(target)
    # A cycle between core's folders: a depth-first search.
    state = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(core_edges[node]):
            if state.get(nxt) == 1:
                problems.append("a cycle between core's folders: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(core_edges):
        if node not in state:
            visit(node, [node])
    for problem in problems:
        print(problem)
    if problems:
        print(f"include_rules: {len(problems)} problem(s); the table: DEVELOPERS.md, '{HEADING}'")
        return 1
    print(f"include_rules: every include keeps DEVELOPERS.md's table ({len(rules)} rows); "
          f"core's {len(core_edges)} folders that include others form no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
