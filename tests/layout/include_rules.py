#!/usr/bin/env python3
"""Checks every quoted #include of the source tree against DEVELOPERS.md's
table "Which folder may include which", and that the folders of core/ include
each other without a cycle.

  include_rules.py REPO_ROOT

A row names a folder (`net`, `operator/api`); a folder with rows for its
subfolders (core/, operator/) is split into them. A cell names folders,
each allowing what lies below it (`core`: every folder of core/), or single
headers (`coordinator/job_types.h`): a room may take one header of a folder
it may not include, and then what that header includes must be allowed to
the room as well, so a header named in a cell cannot bring the rest of its
folder in.

A room of a split folder other than core/ (operator/api) is also a
namespace, named as its folder (ballast::api): every named namespace its
files and its tests' files (tests/operator/api) open is that one or one
inside it (ballast::api::pod_template_test); anonymous ones are free, and
so is another's namespace that only declares its types ahead
(`namespace prometheus { class Registry; }`).

Exits 1 naming each include that breaks the table (file, line, what it
includes, what its folder may include), each cycle and each namespace
outside its room's; 0 when none does.
"""
import collections
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# What is not code: comments, string and character literals (a digit
# separator, 1'000, is no character literal).
NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"'
                      r"|(?<![\w'])'(?:\\.|[^'\\\n])*'", re.S)
# A namespace opened (`namespace a::b {`, `namespace {`) or a brace.
NAMESPACE_OR_BRACE = re.compile(r"\bnamespace\s+([A-Za-z_][\w:]*\s*)?\{|[{}]")
# The body of a namespace that only declares another's types ahead
# (`namespace prometheus { class Registry; }`).
FORWARD_ONLY = re.compile(r"\s*(?:(?:class|struct)\s+\w+\s*;\s*)*")
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
        folder = cells[0].strip("`").rstrip("/")
        if cells[1] == "every folder":
            rules[folder] = None
        else:
            rules[folder] = {c.strip().strip("`").rstrip("/") for c in cells[1].split(",")
                             if c.strip() not in ("—", "")}
    if not rules:
        sys.exit("include_rules: the table in DEVELOPERS.md has no rows")
    return rules


def folder_of(rules, path):
    """The table's name for the folder of a repository path: its top folder,
    or top/sub when the table splits the top folder (core/<x> always)."""
    parts = pathlib.PurePosixPath(path).parts
    if len(parts) < 2:
        return None
    split = parts[0] == "core" or any(name.startswith(parts[0] + "/") for name in rules)
    return "/".join(parts[:2]) if split and len(parts) > 2 else parts[0]


def rule_of(rules, folder):
    """What `folder` may include: a set of names, None for every folder, or
    False when the table has no row for it (nor for its top folder)."""
    if folder in rules:
        return rules[folder]
    top = folder.split("/")[0]
    if top != folder and top in rules:
        return rules[top]
    return False


def below(name, entry):
    return name == entry or name.startswith(entry + "/")


def allowed(rule, source, target, included):
    """How `source`, whose rule is `rule`, may include `included` (of folder
    `target`): "folder" when the table allows its folder, "header" when the
    table names that header alone, None when it may not."""
    if rule is None or source == target or any(below(target, e) for e in rule if not e.endswith(".h")):
        return "folder"
    return "header" if included in rule else None


def quoted_includes(path):
    """(line number, included path) of each quoted include with a folder."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        match = INCLUDE.match(line)
        if match and "/" in match.group(1):
            found.append((number, match.group(1)))
    return found


def through_header(root, rules, rule, source, header, seen):
    """What `header`, named alone in `source`'s cell, includes that `source`
    may not: (the chain of headers, what it includes), following headers
    named alone on."""
    path = root / header
    if header in seen or not path.is_file():
        return []
    seen.add(header)
    breaks = []
    for _, included in quoted_includes(path):
        target = folder_of(rules, included)
        if target is None:
            continue
        how = allowed(rule, source, target, included)
        if how is None:
            breaks.append(([header], included))
        elif how == "header":
            breaks += [([header] + chain, what)
                       for chain, what in through_header(root, rules, rule, source, included, seen)]
    return breaks


def namespaces(path):
    """(line number, full name, body) of each named namespace `path` opens,
    the names of the namespaces it is opened in included (anonymous ones add
    no part to the name); the body is the code between its braces."""
    text = NOT_CODE.sub(lambda m: "\n" * m.group(0).count("\n"),
                        path.read_text(encoding="utf-8", errors="replace"))
    stack, found = [], []
    for match in NAMESPACE_OR_BRACE.finditer(text):
        if match.group(0) == "}":
            if stack:
                name, line, start = stack.pop()
                if name:
                    outer = [part[0] for part in stack if part[0]]
                    found.append((line, "::".join(outer + [name]), text[start:match.start()]))
            continue
        name = "" if match.group(0) == "{" else (match.group(1) or "").strip()
        stack.append((name, text.count("\n", 0, match.start()) + 1, match.end()))
    return sorted(found)


def rooms_of(rules):
    """{room: its namespace} for each row of a split folder other than core's
    (operator/api: ballast::api)."""
    return {folder: "ballast::" + folder.split("/")[-1] for folder in rules
            if "/" in folder and not folder.startswith("core/")}


def namespace_problems(root, rel, rooms):
    """Each namespace that `rel` (a room's file, or a test's of tests/<room>)
    opens outside its room's."""
    for room, wanted in rooms.items():
        if below(rel, room) or below(rel, "tests/" + room):
            return [f"{rel}:{number}: opens namespace {name}, but the room {room} is namespace {wanted}"
                    for number, name, body in namespaces(root / rel)
                    if name != wanted and not name.startswith(wanted + "::")
                    and not FORWARD_ONLY.fullmatch(body)]
    return []


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    rules = read_table(root)
    # Build directories (a CMakeCache.txt) and hidden ones hold no source of ours.
    skipped = {d.name for d in root.iterdir()
               if d.is_dir() and (d.name.startswith(".") or (d / "CMakeCache.txt").exists())}
    problems = []
    rooms = rooms_of(rules)
    core_edges = collections.defaultdict(set)
    sources = [p for d in sorted(root.iterdir()) if d.is_dir() and d.name not in skipped
               for p in sorted(d.rglob("*"))]
    for path in sources:
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        problems += namespace_problems(root, rel, rooms)
        source = folder_of(rules, rel)
        if source is None:
            continue
        rule = rule_of(rules, source)
        if rule is False:
            problems.append(f"{rel}: its folder {source} has no row in the table")
            continue
        may = ", ".join(sorted(rule or [])) or "nothing of ours"
        for number, included in quoted_includes(path):
            target = folder_of(rules, included)
            if target is None:
                continue
            how = allowed(rule, source, target, included)
            if how is None:
                problems.append(f"{rel}:{number}: includes {included}, but {source} may include only {may}")
            elif how == "header":
                for chain, what in through_header(root, rules, rule, source, included, set()):
                    problems.append(f"{rel}:{number}: includes {included}, which brings in {what} "
                                    f"(through {' -> '.join(chain)}), but {source} may include only {may}")
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
          f"core's {len(core_edges)} folders that include others form no cycle; "
          f"each of the {len(rooms)} rooms ({', '.join(sorted(rooms))}) and its tests keep to its namespace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
