#!/usr/bin/env python3
"""The code's sizes (DEVELOPERS.md, "How big a function or class may be"):
no function longer than 60 lines and no class longer than 400, in the
project's own C++ (every folder but tests/ and the build trees), unless the
comment right above it says why in a line that starts `size:`
("// size: the flags' declarative table"). Functions are measured by lizard
(PyPI). A class is measured with its methods: its body, from its opening
line to its closing brace, and each of its methods defined out of line
(`Status Session::Report(...) {...}`, in any file of the tree). A method
counts for the class it is a member of: `Server::Impl::Start` for
Server::Impl, which is measured as a class of its own (a class nested in
another's body is in that body's lines as well). Prints each one past its
bound with its file, line and length; exits 1 when there is one.

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
NAMESPACE_START = re.compile(r"^\s*(?:inline\s+)?namespace\s*([A-Za-z_][\w:]*)?\s*\{")
TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")


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


class Class:
    """A class or struct defined with its body: `name` qualified by its
    namespaces and the classes around it, as lizard names its methods
    (anonymous namespaces left out)."""

    def __init__(self, name, rel, first, last):
        self.name = name
        self.rel = rel
        self.first = first          # 1-based, the line that opens the body
        self.body = last - first + 1
        self.methods = []           # the length of each defined out of line

    def lines(self):
        return self.body + sum(self.methods)


def classes(lines, rel=""):
    """Each class or struct defined with its body in a file. A brace opens a
    namespace on a line that begins one, a class on a line CLASS_START
    matches, and a block anywhere else."""
    found, scopes = [], []   # scopes: (kind, name, Class or None)
    for index, line in enumerate(lines):
        text = strip_literals(line)
        if text.lstrip().startswith("#"):
            continue
        opener = None
        match = NAMESPACE_START.match(text)
        if match:
            opener = ("namespace", match.group(1) or "")
        else:
            match = CLASS_START.match(text)
            if match:
                opener = ("class", match.group(3))
        for char in text:
            if char == "{":
                if opener is None:
                    scopes.append(("block", "", None))
                    continue
                kind, name = opener
                opener = None
                if kind == "namespace":
                    scopes.append((kind, name, None))
                    continue
                outer = [scope_name for scope_kind, scope_name, _ in scopes
                         if scope_kind in ("namespace", "class") and scope_name]
                if any(scope_kind == "block" for scope_kind, _, _ in scopes):
                    outer = []   # a struct inside a function: no methods out of line
                found_class = Class("::".join(outer + [name]), rel, index + 1, index + 1)
                found.append(found_class)
                scopes.append((kind, name, found_class))
            elif char == "}" and scopes:
                _, _, closed = scopes.pop()
                if closed is not None:
                    closed.body = index + 1 - closed.first + 1
    return found


def unqualified(name):
    """A function's name as lizard gives it without template arguments
    (`Ring<T>::Push` is Ring's)."""
    return TEMPLATE_ARGUMENTS.sub("", TEMPLATE_ARGUMENTS.sub("", name))


def owner(qualifier, by_name, rel):
    """The class a method qualified `qualifier` belongs to: the one of that
    name, else the one whose name ends with it (a definition that names its
    class without every namespace); one in the same file first."""
    candidates = by_name.get(qualifier) or [
        found for name, group in by_name.items() if name.endswith("::" + qualifier)
        for found in group]
    if not candidates:
        return None
    same_file = [found for found in candidates if found.rel == rel]
    return (same_file or candidates)[0]


def measure(root, max_function, max_class):
    """The lines naming each function and class past its bound, and the
    number of files measured."""
    problems, all_classes, out_of_line, files = [], [], [], {}
    for path, rel in source_files(root):
        text = path.read_text(errors="replace")
        lines = text.splitlines()
        files[rel] = lines
        file_classes = classes(lines, rel)
        all_classes.extend(file_classes)
        for function in lizard.analyze_file.analyze_source_code(str(path), text).function_list:
            if function.length > max_function and not excused(lines, function.start_line):
                problems.append(f"{rel}:{function.start_line}: function {function.name} is "
                                f"{function.length} lines (at most {max_function})")
            name = unqualified(function.name)
            inside_a_body = any(found.first <= function.start_line < found.first + found.body
                                for found in file_classes)
            if "::" in name and not inside_a_body:
                out_of_line.append((name.rsplit("::", 1)[0], rel, function))
    by_name = {}
    for found in all_classes:
        by_name.setdefault(found.name, []).append(found)
    for qualifier, rel, function in out_of_line:
        found = owner(qualifier, by_name, rel)
        if found is not None:
            found.methods.append(function.length)
    for found in all_classes:
        length = found.lines()
        if length > max_class and not excused(files[found.rel], found.first):
            detail = ""
            if found.methods:
                detail = (f": {found.body} in its body, {length - found.body} in "
                          f"{len(found.methods)} methods out of line")
            problems.append(f"{found.rel}:{found.first}: class {found.name} is {length} lines "
                            f"(at most {max_class}){detail}")
    return problems, len(files)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--max-function", type=int, default=60)
    parser.add_argument("--max-class", type=int, default=400)
    args = parser.parse_args()
    problems, checked = measure(pathlib.Path(args.root), args.max_function, args.max_class)
    for problem in problems:
        print(problem)
    print(f"code_sizes: {checked} files, {len(problems)} past their bound"
          " (a comment line `size: why` right above one excuses it)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
