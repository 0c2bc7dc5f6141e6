#!/usr/bin/env python3
"""Draw the timeline `sstclim run --trace-json FILE` wrote as a Gantt chart (PNG).

One row per thread (readers, decoders, device set-up, compute, writer), one bar per span,
coloured by stage, so the overlap of reading, computing and writing can be seen.

    python3 scripts/trace-gantt.py trace.json [trace.rank1.json ...] -o timeline.png
"""
import argparse
import gzip
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {
    "read": "#4c72b0",
    "compute": "#dd8452",
    "write": "#55a868",
    "verify": "#8172b3",
    "pin": "#c44e52",
    "touch": "#937860",
    "prepare": "#da8bc3",
    "alloc": "#8c8c8c",
    "unpin": "#ff9da7",
    "free": "#8c8c8c",
    "create-outputs": "#ccb974",
    "finish-outputs": "#ccb974",
    "locate": "#64b5cd",
    "fork-locate": "#64b5cd",
    "result-buffers": "#b07aa1",
    "pin-results": "#9c755f",
    "unpin-results": "#ff9da7",
}


def thread_rank(name):
    """Order rows: compute (main), set-up, readers (numbered in order), writer."""
    base, _, num = name.rpartition("-")
    key = (base, int(num)) if num.isdigit() else (name, 0)
    for i, prefix in enumerate(["main", "device-setup", "result-buffers", "locate", "read", "decode", "readers", "writer"]):
        if name.startswith(prefix):
            return (i, key)
    return (9, key)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("-o", "--output", default="timeline.png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    rows = []
    for path in args.traces:
        # traces kept in bench-results are gzipped (`trace-1.json.gz`)
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            t = json.load(f)
        prefix = f"rank {t['rank']}: " if t.get("ranks", 1) > 1 else ""
        for s in t["spans"]:
            thread = s["thread"]
            # one row for all reader threads of a rank when there are many
            rows.append((prefix, thread, s))
    threads = sorted({(p, th) for p, th, _ in rows}, key=lambda x: (x[0], thread_rank(x[1])))
    index = {k: i for i, k in enumerate(threads)}
    height = max(3.5, 0.28 * len(threads) + 2.2)
    fig, ax = plt.subplots(figsize=(12, height))
    seen = set()
    for p, th, s in rows:
        y = index[(p, th)]
        stage = s["stage"]
        label = stage if stage not in seen else None
        seen.add(stage)
        ax.barh(y, s["end"] - s["start"], left=s["start"], height=0.8, color=COLOURS.get(stage, "#333333"),
                edgecolor="none", label=label)
        if stage in ("compute", "write") and s.get("batch") is not None and s["end"] - s["start"] > 0:
            ax.text(s["start"] + (s["end"] - s["start"]) / 2, y, str(s["batch"]), ha="center", va="center",
                    fontsize=7, color="white")
    ax.set_yticks(range(len(threads)))
    ax.set_yticklabels([p + th for p, th in threads], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the run started")
    ax.set_xlim(left=0)
    ax.set_title(args.title or "sstclim run timeline")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=7, ncol=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=130)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
