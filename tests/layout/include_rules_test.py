#!/usr/bin/env python3
"""include_rules.py on a small tree of its own: an include the table allows
passes, one it does not is named with its file and line, a folder without a
row is named, a cycle between core's folders is found; a folder split into
rows (operator/) is checked room by room, and a header a cell names alone
may not bring in what the room may not include; a room's files and its
tests open only the room's namespace (and ones inside it)."""
import pathlib

from tree_check import expect, run_on_tree

SCRIPT = pathlib.Path(__file__).with_name("include_rules.py")
TABLE = """# Developing

## Which folder may include which

| folder | may include |
|---|---|
| `core/common` | — |
| `core` | `core` |
| `net` | `core` |
| `coordinator` | `core`, `net` |
| `operator/api` | `core` |
| `operator/controller` | `core`, `operator/api`, `coordinator/types.h` |
| `operator/runtime` | `core`, `net`, `coordinator`, `operator/api`, `operator/controller` |
| `cli` | `core`, `operator` |
| `tests` | every folder |

## Next
"""


def run(files):
    return run_on_tree(SCRIPT, {"DEVELOPERS.md": TABLE, **files})


code, out = run({"core/a/x.h": '#include "core/common/s.h"\n', "net/n.cc": '#include "core/a/x.h"\n',
                 "tests/t.cc": '#include "net/n.h"\n#include "core/a/x.h"\n'})
expect(code == 0, "includes the table allows pass", out)
code, out = run({"core/common/s.h": '#include <string>\n#include "net/n.h"\n'})
expect(code == 1 and "core/common/s.h:2: includes net/n.h, but core/common may include only nothing of ours" in out,
       "an include the table forbids is named with its line", out)
code, out = run({"net/n.cc": '#include "tests/t.h"\n'})
expect(code == 1 and "net/n.cc:1: includes tests/t.h, but net may include only core" in out,
       "net may not include tests", out)
code, out = run({"worker/w.cc": "int x;\n"})
expect(code == 1 and "worker/w.cc: its folder worker has no row in the table" in out,
       "a folder without a row is named", out)
code, out = run({"core/a/x.h": '#include "core/b/y.h"\n', "core/b/y.h": '#include "core/a/x.h"\n'})
expect(code == 1 and "a cycle between core's folders: core/a -> core/b -> core/a" in out,
       "a cycle between core's folders is found", out)

# The rooms of operator/.
code, out = run({"operator/api/job.h": '#include "core/common/s.h"\n',
                 "operator/controller/decide.h": '#include "operator/api/job.h"\n#include "coordinator/types.h"\n',
                 "operator/runtime/loop.cc": '#include "operator/controller/decide.h"\n#include "net/n.h"\n',
                 "coordinator/types.h": '#include "core/common/s.h"\n',
                 "cli/c.cc": '#include "operator/runtime/loop.h"\n#include "operator/api/job.h"\n'})
expect(code == 0, "each room of operator/ includes what its row allows; `operator` allows every room", out)
code, out = run({"operator/api/job.h": '#include "operator/controller/template.h"\n'})
expect(code == 1 and "operator/api/job.h:1: includes operator/controller/template.h, but operator/api may "
       "include only core" in out, "the model may not include the decisions", out)
code, out = run({"operator/controller/template.cc": '#include "core/common/s.h"\n#include "operator/runtime/leader.h"\n'})
expect(code == 1 and "operator/controller/template.cc:2: includes operator/runtime/leader.h, but "
       "operator/controller may include only coordinator/types.h, core, operator/api" in out,
       "the decisions may not include the runtime", out)
code, out = run({"operator/controller/d.h": '#include "net/kube/client.h"\n'})
expect(code == 1 and "operator/controller/d.h:1: includes net/kube/client.h" in out,
       "the decisions may not include the network", out)
code, out = run({"operator/controller/d.h": '#include "coordinator/session.h"\n'})
expect(code == 1 and "operator/controller/d.h:1: includes coordinator/session.h, but operator/controller" in out,
       "of a folder a row names one header of, another header is refused", out)
code, out = run({"operator/controller/d.h": '#include "coordinator/types.h"\n',
                 "coordinator/types.h": '#include "coordinator/more.h"\n',
                 "coordinator/more.h": '#include "net/n.h"\n'})
expect(code == 1 and "operator/controller/d.h:1: includes coordinator/types.h, which brings in "
       "coordinator/more.h (through coordinator/types.h)" in out,
       "a header named alone may not bring in the rest of its folder", out)
code, out = run({"operator/webhook/w.cc": "int x;\n"})
expect(code == 1 and "operator/webhook/w.cc: its folder operator/webhook has no row in the table" in out,
       "a new room of a split folder needs a row of its own", out)

# A room is a namespace, named as its folder.
code, out = run({"operator/api/job.h": "namespace ballast::api {\nstruct Job {};\n}\n",
                 "operator/api/job.cc": "namespace ballast::api {\nnamespace {\nint x;\n}\n}\n",
                 "operator/controller/decide.cc":
                     "namespace ballast::controller::decide {\nvoid f() { if (true) { } }\n}\n",
                 "operator/runtime/loop.h": "namespace prometheus {\nclass Registry;\nstruct Family;\n}\n"
                                            "namespace ballast::runtime {\n"
                                            "// namespace ballast::controller {\n"
                                            "const char* s = \"namespace x {\";\nint n = 1'000'000;\n}\n",
                 "tests/operator/api/job_test.cc": "namespace ballast::api::job_test {\n}\n",
                 "tests/operator/e2e/e.cc": "namespace ballast::operator_e2e {\n}\n"})
expect(code == 0, "a room's files and tests open its namespace, ones inside it, anonymous ones, and "
       "others' only to declare types ahead; comments and strings are no code", out)
code, out = run({"operator/api/job.h": "namespace ballast::api {\n}\nnamespace ballast::controller {\nint x;\n}\n"})
expect(code == 1 and "operator/api/job.h:3: opens namespace ballast::controller, but the room operator/api "
       "is namespace ballast::api" in out, "a model's header in the decisions' namespace is named", out)
code, out = run({"operator/runtime/r.cc": "namespace ballast {\nnamespace controller {\nvoid f();\n}\n}\n"})
expect(code == 1 and "operator/runtime/r.cc:2: opens namespace ballast::controller, but the room "
       "operator/runtime is namespace ballast::runtime" in out and "r.cc:1: opens namespace ballast," in out,
       "a namespace opened inside another is named by its full name; ballast alone is no room's", out)
code, out = run({"tests/operator/controller/d_test.cc": "namespace ballast::api {\nint x;\n}\n"})
expect(code == 1 and "tests/operator/controller/d_test.cc:1: opens namespace ballast::api, but the room "
       "operator/controller is namespace ballast::controller" in out,
       "a room's tests keep to the room's namespace", out)
code, out = run({"operator/controller/d.h": "namespace ballast::controllers {\nint x;\n}\n"})
expect(code == 1 and "opens namespace ballast::controllers" in out,
       "a namespace that only begins with the room's name is another", out)
