#!/usr/bin/env python3
"""Per-run wall time and read stage from the run reports of run.sh, and the locate spans of
the timelines kept (run 3 of each setting).
   summarize.py [RESULTS_DIR...]"""
import json
import statistics
import sys

for d in sys.argv[1:] or ["."]:
    print(f"== {d}")
    for v in ["before", "after", "after-lib"]:
        walls, reads, locs = [], [], []
        for i in (1, 2, 3):
            r = json.load(open(f"{d}/run-{v}-{i}.json"))
            walls.append(r["wall_seconds"])
            reads.append(r["stage_seconds"]["read"])
            try:  # (only one timeline per setting is kept)
                spans = json.load(open(f"{d}/trace-{v}-{i}.json"))["spans"]
            except FileNotFoundError:
                continue
            loc = [s for s in spans if s["stage"] == "locate"]
            threads = sorted({s["thread"].split("-")[0] for s in loc})
            locs.append(sum(s["end"] - s["start"] for s in loc))
        locate = f" | locate spans on {threads}, summed {locs[-1]:.3f} s (run 3)" if locs else ""
        print(
            f"{v:>10}: wall {' '.join(f'{w:.3f}' for w in walls)} (median {statistics.median(walls):.3f}) | "
            f"read stage {' '.join(f'{x:.3f}' for x in reads)} (median {statistics.median(reads):.3f})" + locate
        )
