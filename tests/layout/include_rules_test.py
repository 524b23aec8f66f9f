#!/usr/bin/env python3
"""include_rules.py on a small tree of its own: an include the table allows
passes, one it does not is named with its file and line, a folder without a
row is named, a cycle between core's folders is found."""
import pathlib
import subprocess
import sys
import tempfile

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
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "DEVELOPERS.md").write_text(TABLE)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        done = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)
        return done.returncode, done.stdout


def expect(condition, what, output):
    if not condition:
        print(f"FAIL: {what}\n{output}")
        sys.exit(1)
    print(f"ok: {what}")


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
