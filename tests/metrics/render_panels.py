"""Draws dashboard panels' data, as dashboards_check.py fetched it from
Prometheus, to PNG with matplotlib: one image a panel, named
DASHBOARD-PANELID.png. Time series become lines, a state timeline becomes
bars, a bar gauge becomes horizontal bars of the last values. What it draws
is what the panel's queries returned; the look only approximates Grafana's.
A panel whose queries returned nothing (dashboards_check.NO_DATA_IN_RUN) is
not drawn.
"""

import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNIT_LABELS = {"percentunit": "fraction", "s": "seconds", "reqps": "per second",
               "dateTimeAsIso": "seconds from the run's start"}


def legend(template, labels):
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), template or "")
    return text or ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "value"


def points(series, start):
    xs, ys = [], []
    for stamp, value in series["values"]:
        number = float(value)
        if not math.isnan(number):
            xs.append(float(stamp) - start)
            ys.append(number)
    return xs, ys


def render(dashboards, data, start, end, out_dir):
    """Draws every panel with data; returns the titles of those without."""
    os.makedirs(out_dir, exist_ok=True)
    empty = []
    for name, dashboard in dashboards.items():
        for panel in dashboard["panels"]:
            if not any(data[(name, panel["id"], target["refId"])] for target in panel["targets"]):
                empty.append(f"{name}: {panel['title']}")
                continue
            unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
            figure, axes = plt.subplots(figsize=(8, 3.6), dpi=90)
            kind = panel["type"]
            if kind == "state-timeline":
                draw_states(axes, panel, data[(name, panel["id"], "A")], start)
            elif kind == "bargauge":
                draw_bars(axes, panel, data, name)
            else:
                draw_lines(axes, panel, data, name, start, unit)
            axes.set_title(f"{dashboard['title']}: {panel['title']}", fontsize=10)
            figure.tight_layout()
            figure.savefig(os.path.join(out_dir, f"{name}-{panel['id']}.png"))
            plt.close(figure)
    return empty


def draw_lines(axes, panel, data, name, start, unit):
    for target in panel["targets"]:
        for series in data[(name, panel["id"], target["refId"])]:
            xs, ys = points(series, start)
            if not xs:
                continue  # no value over the run (e.g. a reply kind never sent)
            if unit == "dateTimeAsIso":
                ys = [y / 1000 - start for y in ys]
            dashed = "weight" in (target.get("legendFormat") or "")
            axes.plot(xs, ys, linestyle="--" if dashed else "-", linewidth=1.4,
                      label=legend(target.get("legendFormat"), series["metric"]))
    axes.set_xlabel("seconds from the run's start")
    axes.set_ylabel(UNIT_LABELS.get(unit, ""))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="best")


def draw_states(axes, panel, result, start):
    rows = sorted(result, key=lambda s: s["metric"].get("node", ""))
    for row, series in enumerate(rows):
        xs, ys = points(series, start)
        for x, y in zip(xs, ys):
            axes.broken_barh([(x, 1)], (row - 0.4, 0.8),
                             color="tab:green" if y >= 1 else "0.75")
    target = panel["targets"][0]
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([legend(target.get("legendFormat"), s["metric"]) for s in rows])
    axes.set_xlabel("seconds from the run's start (green: holding work, grey: waiting)")


def draw_bars(axes, panel, data, name):
    labels, values = [], []
    for target in panel["targets"]:
        for series in data[(name, panel["id"], target["refId"])]:
            finite = [float(v) for _, v in series["values"] if not math.isnan(float(v))]
            labels.append(legend(target.get("legendFormat"), series["metric"]))
            values.append(finite[-1] if finite else 0)
    axes.barh(range(len(values)), values, color="tab:blue")
    axes.set_yticks(range(len(values)))
    axes.set_yticklabels(labels, fontsize=7)
    axes.set_xlabel("count over the run")
