#!/usr/bin/env python3
"""code_sizes.py on a small tree of its own: a short function and class pass,
a function or class past its bound is named with its file, line and length,
a `size:` line right above one excuses it, and tests/ is not measured."""
import pathlib

from tree_check import expect, run_on_tree

SCRIPT = pathlib.Path(__file__).with_name("code_sizes.py")


def function(name, lines, comment=""):
    body = "".join(f"  x += {i};\n" for i in range(lines - 4))
    return f"{comment}int {name}() {{\n  int x = 0;\n{body}  return x;\n}}\n"


def cls(name, lines, comment=""):
    members = "".join(f"  int m{i} = {i};\n" for i in range(lines - 3))
    return f"{comment}class {name} {{\n public:\n{members}}};\n"


def run(files):
    return run_on_tree(SCRIPT, files)


code, out = run({"core/a.cc": function("Short", 60) + cls("Small", 400)})
expect(code == 0, "a function of 60 lines and a class of 400 pass", out)
code, out = run({"core/a.cc": "// one\n" + function("Long", 61)})
expect(code == 1 and "core/a.cc:2: function Long is 61 lines (at most 60)" in out,
       "a function of 61 lines is named with its line and length", out)
code, out = run({"cli/b.h": "#pragma once\n" + cls("Big", 401)})
expect(code == 1 and "cli/b.h:2: class Big is 401 lines (at most 400)" in out,
       "a class of 401 lines is named with its line and length", out)
code, out = run({"cli/c.cc": function("Flags", 90, "// The flags.\n// size: the flags' table\n")})
expect(code == 0, "a size: line right above excuses a function", out)
code, out = run({"cli/c.cc": function("Flags", 90, "// size: the flags' table\n\n")})
expect(code == 1, "a size: line not right above does not", out)
code, out = run({"cli/c.cc": function("Flags", 90, "// size:\n")})
expect(code == 1, "a size: line must say why", out)
code, out = run({"tests/t.cc": function("ATest", 200)})
expect(code == 0, "tests/ is not measured", out)
code, out = run({"core/d.cc": 'const char* s = "}}}";\n' + cls("Quoted", 50)})
expect(code == 0 and "1 files" in out, "braces in strings are not counted", out)
