#!/usr/bin/env python3
"""Every module of the integration test binary is named in docs/testing.md, and every module
docs/testing.md names exists: a file tests/it/AREA/NAME.rs is named as `tests/it/AREA/NAME.rs`,
an area (a folder with its mod.rs) as `tests/it/AREA/`, the root as `tests/it/main.rs`.

Usage: python3 scripts/check-test-modules.py [REPO]   (exit 1 naming what is missing)
       python3 scripts/check-test-modules.py --self-test  (the check fails on a planted miss)
"""

import re
import sys
import tempfile
from pathlib import Path

NAMED = re.compile(r"tests/it/[A-Za-z0-9_/]*(?:\.rs|/)")


def modules(root: Path) -> set[str]:
    """The names the doc must use for the module files under tests/it."""
    found = set()
    for path in (root / "tests/it").rglob("*.rs"):
        rel = path.relative_to(root).as_posix()
        found.add(rel[: -len("mod.rs")] if path.name == "mod.rs" else rel)
    return found


def named(doc: str) -> set[str]:
    """The tests/it paths the doc names (a folder with or without its mod.rs)."""
    return {m[: -len("mod.rs")] if m.endswith("/mod.rs") else m for m in NAMED.findall(doc)}


def check(root: Path) -> list[str]:
    """One line per module the doc misses and per name of the doc that is no module."""
    doc_path = root / "docs/testing.md"
    have, doc = modules(root), named(doc_path.read_text())
    problems = [f"{m}: a test module that {doc_path.relative_to(root)} does not name" for m in sorted(have - doc)]
    problems += [f"{m}: named in {doc_path.relative_to(root)}, but no such test module" for m in sorted(doc - have)]
    return problems


def self_test() -> int:
    """A tree whose doc names every module passes; one module left out of the doc, and a name
    of the doc whose file is gone, each fail naming it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "tests/it/run").mkdir(parents=True)
        (root / "docs").mkdir()
        for f in ["main.rs", "run/mod.rs", "run/hobday.rs"]:
            (root / "tests/it" / f).write_text("//! x\n")
        whole = "`tests/it/main.rs`, `tests/it/run/` (`tests/it/run/hobday.rs`)\n"
        cases = [
            (whole, []),
            (whole.replace("`tests/it/run/hobday.rs`", "hobday"), ["tests/it/run/hobday.rs: a test module"]),
            (whole + "`tests/it/run/gone.rs`\n", ["tests/it/run/gone.rs: named in"]),
        ]
        for doc, expected in cases:
            (root / "docs/testing.md").write_text(doc)
            got = check(root)
            if len(got) != len(expected) or not all(g.startswith(e) for g, e in zip(got, expected)):
                print(f"self-test failed: doc {doc!r} gave {got}, expected {expected}", file=sys.stderr)
                return 1
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
