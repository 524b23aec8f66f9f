#!/usr/bin/env python3
"""SHA-256 of each file of the run's items, summed into a small result.

Reads the paths (relative to $IN) listed in $BALLAST_ITEMS_FILE and writes to
$BALLAST_RESULT_FILE: the number of files, their bytes, the largest, a
checksum (the sum of each digest's first 32 bits, which does not depend on
how the items were split) and the paths of empty files (a bounded list).
"""
import hashlib
import json
import os

root = os.environ.get("IN", "/data/in")
files = size = largest = checksum = 0
empty = []
with open(os.environ["BALLAST_ITEMS_FILE"], encoding="utf-8") as items:
    for line in items:
        path = line.rstrip("\n")
        digest = hashlib.sha256()
        with open(os.path.join(root, path), "rb") as data:
            for block in iter(lambda: data.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
        length = os.path.getsize(os.path.join(root, path))
        files += 1
        largest = max(largest, length)
        checksum += int.from_bytes(digest.digest()[:4], "big")
        if length == 0:
            empty.append(path)
with open(os.environ["BALLAST_RESULT_FILE"], "w", encoding="utf-8") as out:
    json.dump({"files": files, "bytes": size, "largest": largest,
               "checksum": checksum, "empty": empty}, out)
