"""What the layout checks' own tests share: a check run on a small tree of
files written for it, and a verdict printed a line each."""
import pathlib
import subprocess
import sys
import tempfile


def run_on_tree(script, files):
    """Runs `script ROOT` on a temporary tree holding `files` (path -> text);
    returns its exit code and output."""
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        done = subprocess.run([sys.executable, str(script), str(root)], capture_output=True,
                              text=True)
        return done.returncode, done.stdout


def expect(condition, what, output):
    """Prints `ok: what`, or `FAIL: what` and the output and exits 1."""
    if not condition:
        print(f"FAIL: {what}\n{output}")
        sys.exit(1)
    print(f"ok: {what}")
