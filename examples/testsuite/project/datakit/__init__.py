"""datakit: the small data library whose test suite examples/testsuite runs.

A stand-in for a project of one's own: plain Python, each module a thing a
data team writes once and tests hard (tests/checks.py says how)."""
