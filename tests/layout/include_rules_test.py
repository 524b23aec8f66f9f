#!/usr/bin/env python3
"""include_rules.py on a small tree of its own: an include the table allows
passes, one it does not is named with its file and line, a folder without a
row is named, a cycle between core's folders is found."""
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
