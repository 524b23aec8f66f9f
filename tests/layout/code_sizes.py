#!/usr/bin/env python3
"""The code's sizes (DEVELOPERS.md, "How big a function or class may be"):
no function longer than 60 lines and no class longer than 400, in the
project's own C++ (every folder but tests/ and the build trees), unless the
comment right above it says why in a line that starts `size:`
("// size: the flags' declarative table"). Functions are measured by lizard
(PyPI); classes from their opening line to their closing brace. Prints each
one past its bound with its file, line and length; exits 1 when there is one.

usage: code_sizes.py ROOT [--max-function N] [--max-class N]"""
import argparse
import pathlib
import re
import sys

try:
    import lizard
except ImportError:
    print("code_sizes: lizard is missing: scripts/install-deps installs it "
          "(a venv in the cache, see DEVELOPERS.md)")
    sys.exit(2)

SKIP = {"tests", "build", "docs", "examples", "helm", "crds", "docker", "prometheus", "scripts",
        "plugins"}
CLASS_START = re.compile(r"^(\s*)(?:template\s*<[^>]*>\s*)?(class|struct)\s+([A-Za-z_][\w:]*)"
                         r"(?:\s+final)?(?:\s*:[^;{]*)?\s*\{\s*$")


def source_files(root):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in (".cc", ".h") or not path.is_file():
            continue
        if rel.parts[0] in SKIP or rel.parts[0].startswith("build") or rel.parts[0].startswith("."):
            continue
        yield path, rel


def excused(lines, first):
    """The `size:` line in the comment block right above line `first` (1-based)."""
    i = first - 2
    while i >= 0 and lines[i].strip().startswith("//"):
        text = lines[i].strip()[2:].strip()
        if text.startswith("size:") and len(text) > len("size:") + 3:
            return text
        i -= 1
    return None


def strip_literals(line):
    """The line without string and character literals and // comments, for
    counting braces (raw strings spanning lines are rare here and not
    counted)."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def classes(lines):
    """(name, first line, length) of each class or struct defined with its body."""
    found = []
    for index, line in enumerate(lines):
        match = CLASS_START.match(line)
        if not match:
            continue
        depth = 0
        for end in range(index, len(lines)):
            text = strip_literals(lines[end])
            depth += text.count("{") - text.count("}")
            if depth == 0 and end > index:
                found.append((match.group(3), index + 1, end - index + 1))
                break
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--max-function", type=int, default=60)
    parser.add_argument("--max-class", type=int, default=400)
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    problems = []
    checked = 0
    for path, rel in source_files(root):
        text = path.read_text(errors="replace")
        lines = text.splitlines()
        checked += 1
        for function in lizard.analyze_file.analyze_source_code(str(path), text).function_list:
            if function.length > args.max_function and not excused(lines, function.start_line):
                problems.append(f"{rel}:{function.start_line}: function {function.name} is "
                                f"{function.length} lines (at most {args.max_function})")
        for name, first, length in classes(lines):
            if length > args.max_class and not excused(lines, first):
                problems.append(f"{rel}:{first}: class {name} is {length} lines "
                                f"(at most {args.max_class})")
    for problem in problems:
        print(problem)
    print(f"code_sizes: {checked} files, {len(problems)} past their bound"
          " (a comment line `size: why` right above one excuses it)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
