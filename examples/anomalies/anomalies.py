#!/usr/bin/env python3
"""Flags the anomalies of one time series, as a data team's first script does.

Reads the CSV (time,value) named by the run's item (a path under $IN, the
one line of $BALLAST_ITEMS_FILE: the job runs it once per item) and flags
every point more than 3.5 standard deviations from the mean of the WINDOW
(default 48) points before it. Writes the series' counts to
$BALLAST_RESULT_FILE. A value that is not a number fails the item with
Python's own message, naming the file and line.
"""
import csv
import json
import os
import statistics
import sys

root = os.environ.get("IN", "/data/in")
window = int(os.environ.get("WINDOW", "48"))
with open(os.environ["BALLAST_ITEMS_FILE"], encoding="utf-8") as items:
    item = items.readline().rstrip("\n")
values = []
with open(os.path.join(root, item), newline="", encoding="utf-8") as data:
    rows = csv.reader(data)
    next(rows)  # the header
    for line, row in enumerate(rows, start=2):
        try:
            values.append(float(row[1]))
        except (ValueError, IndexError) as error:
            sys.exit(f"{item}:{line}: {error}")
anomalies = 0
for i in range(window, len(values)):
    recent = values[i - window:i]
    mean = statistics.fmean(recent)
    spread = statistics.pstdev(recent, mean)
    if spread > 0 and abs(values[i] - mean) > 3.5 * spread:
        anomalies += 1
with open(os.environ["BALLAST_RESULT_FILE"], "w", encoding="utf-8") as out:
    json.dump({"series": 1, "points": len(values), "anomalies": anomalies,
               "longest": len(values)}, out)
