#!/usr/bin/env python3
"""code_sizes.py on a small tree of its own: a short function and class pass,
a function or class past its bound is named with its file, line and length,
a `size:` line right above one excuses it, and tests/ is not measured; a
class counts with its methods defined out of line (in its namespace, not a
namespace's functions nor another namespace's class of the same name), each
method for the class it is a member of (`Server::Impl::Start` for
Server::Impl, not Server)."""
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


def methods(owner, count, lines, namespace=None, template=""):
    """`count` methods of `owner` defined out of line, `lines` long each,
    inside `namespace`'s braces when one is given."""
    body = "".join(f"  x += {i};\n" for i in range(lines - 4))
    text = "".join(f"{template}int {owner}::M{i}() {{\n  int x = 0;\n{body}  return x;\n}}\n"
                   for i in range(count))
    return text if namespace is None else in_namespace(namespace, text)


def in_namespace(namespace, text):
    return f"namespace {namespace} {{\n{text}}}  // namespace {namespace}\n"


# A class counts with its methods defined out of line, in any file.
session = {"core/s.h": in_namespace("ns", cls("Session", 300))}
code, out = run({**session, "core/s.cc": methods("Session", 2, 50, "ns")})
expect(code == 0, "a class of 300 lines and 100 in methods out of line passes", out)
code, out = run({**session, "core/s.cc": methods("Session", 2, 50, "ns") +
                 methods("Session", 1, 5, "ns")})
expect(code == 1 and "core/s.h:2: class ns::Session is 405 lines (at most 400): 300 in its "
       "body, 105 in 3 methods out of line" in out,
       "a class of 300 lines and 105 in methods out of line is named with both", out)
code, out = run({**session, "core/s.cc": methods("ns::Session", 3, 50)})
expect(code == 1 and "class ns::Session is 450 lines" in out,
       "methods that name their namespace count", out)
code, out = run({**session, "core/t.cc": methods("Session", 3, 50, "other")})
expect(code == 0, "a class of the same name in another namespace keeps its methods", out)
code, out = run({**session, "core/s.cc": methods("ns", 3, 50)})
expect(code == 0, "functions of a namespace are no class's", out)
inline = ("class Inline {\n public:\n" + "".join(
    f"  int F{i}() {{\n    return {i};\n  }}\n" for i in range(99)) + "};\n")
code, out = run({"core/i.h": inline})
expect(code == 0, "a method defined in the body counts once", out)
code, out = run({"core/a.cc": in_namespace("", cls("Hidden", 300)) + methods("Hidden", 3, 50)})
expect(code == 1 and "class Hidden is 450 lines" in out,
       "a class of an anonymous namespace counts its methods", out)
code, out = run({"core/r.h": "template <typename T>\n" + cls("Ring", 300),
                 "core/r.cc": methods("Ring<T>", 3, 50, template="template <typename T>\n")})
expect(code == 1 and "class Ring is 450 lines" in out,
       "a template's methods count without their arguments", out)
code, out = run({"core/s.h": "// size: the messages' table, one line each\n" +
                 cls("Table", 300), "core/s.cc": methods("Table", 3, 50)})
expect(code == 0, "a size: line right above a class excuses its methods too", out)
# A nested class's methods count for it and not for the class around it;
# one whose body is in the other's body counts in that body's lines.
pimpl = {"net/server.h": in_namespace("net", cls("Server", 200)),
         "net/server.cc": in_namespace("net", cls("Server::Impl", 150)) +
         methods("Server::Impl", 6, 50, "net") + methods("Server", 3, 10, "net")}
code, out = run(pimpl)
expect(code == 1 and "net/server.cc:2: class net::Server::Impl is 450 lines (at most 400): "
       "150 in its body, 300 in 6 methods out of line" in out and "class net::Server " not in out,
       "Server::Impl::M0 counts for Server::Impl and not for Server", out)
nested = ("class Outer {\n public:\n  struct Part {\n    int Get();\n  };\n" +
          "".join(f"  int m{i} = {i};\n" for i in range(290)) + "};\n")
code, out = run({"core/o.h": nested, "core/o.cc": methods("Outer::Part", 8, 50)})
expect(code == 1 and "core/o.h:3: class Outer::Part is 403 lines" in out and
       "class Outer " not in out,
       "a nested class past its bound with its methods is named by its whole name", out)
