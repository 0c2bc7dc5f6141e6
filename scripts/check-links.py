#!/usr/bin/env python3
"""Every relative link and image in the given markdown files points to an existing file or
folder (anchors are checked against the target file's headings). Prints each broken link;
exits 1 if there is one.

    python3 scripts/check-links.py README.md CHANGELOG.md docs/*.md bench-results/README.md"""
import pathlib
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(path):
    """GitHub's heading anchors of a markdown file."""
    out = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        text = re.sub(r"[^\w\- ]", "", text)
        out.add(text.replace(" ", "-"))
    return out


def strip_code(text):
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


bad = 0
for name in sys.argv[1:]:
    md = pathlib.Path(name)
    for target in LINK.findall(strip_code(md.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        dest = (md.parent / path).resolve() if path else md.resolve()
        if not dest.exists():
            print(f"{md}: {target}: no such file")
            bad += 1
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            print(f"{md}: {target}: no heading #{anchor}")
            bad += 1
sys.exit(1 if bad else 0)
