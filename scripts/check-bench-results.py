#!/usr/bin/env python3
"""bench-results/ keeps only runs that back a stated number, small and portable. Every folder
under bench-results/runs/ must be:

- indexed: a row of bench-results/README.md links to it;
- cited: README.md, CHANGELOG.md or a page of docs/ links to it or to a file in it;
- under 1 MB (the sum of its files' sizes);
- free of archives (.tar, .tgz, .gz, .zip, .xz, .bz2, .zst, .7z): summarise large raw logs;
- free of machine paths in its scripts (.sh, .bash, .cmd, .py): no /work/, /root/, /tmp/ or
  /home/ directory of a particular machine; use $SCRATCH, $WORK, $HOME or a path relative to
  the checkout.

Prints one line per problem and exits 1 if there is one. Run from the repository root:

    python3 scripts/check-bench-results.py [ROOT]"""
import pathlib
import re
import sys

LIMIT = 1_000_000
ARCHIVE = re.compile(r"\.(tar|tgz|tbz2?|txz|gz|zip|xz|bz2|zst|7z|rar)$", re.I)
SCRIPT = {".sh", ".bash", ".cmd", ".py"}
MACHINE_PATH = re.compile(r"(?<![\w$}.])/(work|root|tmp|home)(/|\b)")


def cited_runs(root):
    """Run folders that README.md, CHANGELOG.md or docs/*.md name (a link to it or a file in it)."""
    pages = [root / "README.md", root / "CHANGELOG.md", *sorted((root / "docs").glob("**/*.md"))]
    found = set()
    for page in pages:
        if page.exists():
            found |= set(re.findall(r"bench-results/runs/([^/)\s#`]+)", page.read_text(encoding="utf-8")))
    return found


def problems(root):
    runs_dir = root / "bench-results" / "runs"
    index = (root / "bench-results" / "README.md").read_text(encoding="utf-8")
    indexed = set(re.findall(r"\]\(runs/([^/)\s#]+)", index))
    cited = cited_runs(root)
    out = []
    for run in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        name = run.name
        if name not in indexed:
            out.append(f"{name}: not indexed in bench-results/README.md")
        if name not in cited:
            out.append(f"{name}: cited by none of README.md, CHANGELOG.md, docs/*.md (delete it, or cite it)")
        files = [f for f in run.rglob("*") if f.is_file()]
        size = sum(f.stat().st_size for f in files)
        if size >= LIMIT:
            out.append(f"{name}: {size} bytes, over 1 MB: summarise the large raw files")
        for f in files:
            rel = f.relative_to(runs_dir)
            if ARCHIVE.search(f.name):
                out.append(f"{rel}: an archive; keep the summary, leave the bulk in git history")
            elif f.suffix in SCRIPT:
                for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                    if MACHINE_PATH.search(line):
                        out.append(f"{rel}:{n}: a machine path: {line.strip()[:120]}")
    for run in sorted(indexed - {p.name for p in runs_dir.iterdir()}):
        out.append(f"{run}: indexed in bench-results/README.md but no such folder")
    return out


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    found = problems(root)
    for line in found:
        print(f"bench-results: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
