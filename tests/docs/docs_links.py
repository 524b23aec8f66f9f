#!/usr/bin/env python3
"""The docs' links and the code's citations of them hold (DEVELOPERS.md,
"Figures in the docs").

  docs_links.py SOURCE_DIR

Checks, in README.md, DEVELOPERS.md and docs/*.md, that every relative link
names a file that exists and, with a #fragment, a heading of that page (as
GitHub makes its anchors). In the repository's other text files it checks
that a citation of a page's section — `docs/efficiency.md, "An endgame
backup"` — names a heading of that page (or the start of one), and that no
citation names a numbered item of a page instead (`docs/efficiency.md, item
19`). Exits 1 naming each broken link or citation."""
import glob
import os
import re
import subprocess
import sys


def slug(heading):
    text = heading.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(path):
    """The page's headings, outside code blocks, in order."""
    found = []
    in_code = False
    with open(path, encoding="utf-8") as page:
        for line in page:
            if line.startswith("```"):
                in_code = not in_code
                continue
            match = None if in_code else re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
            if match:
                found.append(match.group(2))
    return found


def anchors(path):
    seen = {}
    result = set()
    for heading in headings(path):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def main():
    os.chdir(sys.argv[1])
    pages = ["README.md", "DEVELOPERS.md"] + sorted(glob.glob("docs/*.md"))
    errors = []
    links = 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for match in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = match.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            links += 1
            if not os.path.exists(resolved):
                errors.append(f"{page}: the link ({target}) names no file")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                errors.append(f"{page}: the link ({target}) names no heading of {resolved}")

    titles = {page: [h.replace("`", "").lower() for h in headings(page)] for page in pages}
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    citation = re.compile(
        r'((?:docs/)?[a-z-]+\.md)\)?,\s*(?:\n\s*(?://|#)\s*)?"([^"]+)"', re.M)
    numbered = re.compile(r'((?:docs/)?[a-z-]+\.md)\)?,\s*(?:\n\s*(?://|#)\s*)?items? [0-9]')
    citations = 0
    for name in files:
        if name == "docs/changelog.md" or not os.path.isfile(name):
            continue
        try:
            with open(name, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for match in citation.finditer(text):
            doc = match.group(1)
            page = doc if doc.startswith("docs/") or doc in ("README.md", "DEVELOPERS.md") \
                else f"docs/{doc}"
            if page not in titles:
                continue
            cited = re.sub(r"\s*\n\s*(?://|#)?\s*", " ", match.group(2)).replace("`", "").lower()
            citations += 1
            if not any(title.startswith(cited.rstrip(":")) for title in titles[page]):
                line = text.count("\n", 0, match.start()) + 1
                errors.append(f'{name}:{line}: cites {page}, "{match.group(2)}": no such heading')
        for match in numbered.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            errors.append(f"{name}:{line}: cites {match.group(1)} by an item's number, not a heading")

    for error in errors:
        print(f"FAIL: {error}")
    if errors:
        return 1
    print(f"ok: {links} links of {len(pages)} pages and {citations} citations of sections hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
