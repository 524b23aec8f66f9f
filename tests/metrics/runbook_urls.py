#!/usr/bin/env python3
"""Every alert of the rules links its runbook (docs/metrics.md, "Runbooks").

  runbook_urls.py RULES.yaml DOCS/metrics.md

Each alert must carry the annotation runbook_url, exactly
https://github.com/ballast-io/ballast/blob/main/docs/metrics.md#ANCHOR, where
ANCHOR is the anchor GitHub makes of a heading of DOCS/metrics.md that names
the alert (the heading `### BallastJobStalled` for the alert
BallastJobStalled). Prints one line per alert and exits 1 naming each alert
that breaks the rule.
"""

import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"))
import docs_links  # noqa: E402  (the anchors as docs_links checks them)

PAGE = "https://github.com/ballast-io/ballast/blob/main/docs/metrics.md"


def problems(rules_path, docs_path):
    with open(rules_path, encoding="utf-8") as handle:
        rules = yaml.safe_load(handle)
    anchors = docs_links.anchors(docs_path)
    found, alerts = [], 0
    for group in rules.get("groups", []):
        for rule in group.get("rules", []):
            if "alert" not in rule:
                continue
            alerts += 1
            name = rule["alert"]
            url = (rule.get("annotations") or {}).get("runbook_url")
            if not url:
                found.append(f"{name}: no runbook_url annotation")
                continue
            page, _, anchor = url.partition("#")
            if page != PAGE:
                found.append(f"{name}: runbook_url {url} is not on {PAGE}")
            elif anchor not in anchors:
                found.append(f"{name}: runbook_url's anchor #{anchor} is no heading of "
                             f"{docs_path}")
            elif anchor != docs_links.slug(name):
                found.append(f"{name}: runbook_url's anchor #{anchor} is not the alert's own "
                             f"heading, #{docs_links.slug(name)}")
            else:
                print(f"ok: {name}: {url}")
    if alerts == 0:
        found.append(f"{rules_path} has no alert")
    return found


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(sys.argv[1], sys.argv[2])
    for problem in found:
        print(f"FAIL: {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
