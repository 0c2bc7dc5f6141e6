#!/usr/bin/env python3
"""Summarise a scripts/bench/foundation.sh result folder as a markdown table (printed and written
as summary.md beside the raw files)."""
import json
import pathlib
import re
import sys

raw = pathlib.Path(sys.argv[1])


def resources(name):
    text = (raw / f"{name}.time").read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    parts = [float(p) for p in wall.split(":")]
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    return seconds, rss_kb / 1e6


lines = ["| step | command | wall s | peak RSS GB | detail |", "|---|---|---|---|---|"]
for name in ["demo", "gen360", "run360-type5", "run360-type7", "gen1440", "run1440", "run1440-verify"]:
    if not (raw / f"{name}.time").exists():
        continue
    wall, rss = resources(name)
    cmd = (raw / f"{name}.cmd").read_text().strip().replace(str(pathlib.Path.cwd()) + "/", "")
    detail = ""
    j = raw / f"{name}.json"
    if j.exists():
        r = json.loads(j.read_text())
        s = r["stage_seconds"]
        detail = (f"{r['tiles']} tile(s); read {s['read']:.1f} s ({r['bytes_read'] / 1e9 / max(s['read'], 1e-9):.2f} GB/s), "
                  f"compute {s['compute']:.1f} s, verify {s['verify']:.1f} s, write {s['write']:.1f} s; "
                  f"verified={r['verified']}")
        if (raw / f"{name}.cache").exists():
            detail += f"; page cache {(raw / f'{name}.cache').read_text().strip()}"
    lines.append(f"| {name} | `{cmd}` | {wall:.1f} | {rss:.2f} | {detail} |")
text = (raw / "machine.txt").read_text() + "\n" + "\n".join(lines) + "\n"
(raw / "summary.md").write_text(text)
print(text)
