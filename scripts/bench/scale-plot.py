#!/usr/bin/env python3
"""Plot a scripts/bench/scale-test.sh result folder: speedup and parallel efficiency per stage against the
number of MPI ranks (scale.png), and a markdown table (summary.md).

A stage's time at n ranks is the slowest rank's (the job waits for it); the wall time is
rank 0's from start to outputs in place. One-rank runs (the plain pipeline) report their
stage_seconds directly. With several repeats the fastest run of each rank count is used."""
import json
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STAGES = [("discover", "discover"), ("read", "read/decode"), ("h2d", "host-to-device"),
          ("kernel", "kernel"), ("d2h", "device-to-host"), ("compute", "compute"), ("write", "write")]


def load(path):
    j = json.loads(path.read_text())
    if "per_rank" in j:
        busy = [r for r in j["per_rank"] if r["target_days"] > 0]
        stages = {k: max(r["stage_seconds"].get(k, 0.0) for r in busy) for k, _ in STAGES}
        return j["ranks"], j["total_wall_seconds"], stages
    return 1, j["wall_seconds"], {k: j["stage_seconds"].get(k, 0.0) for k, _ in STAGES}


def main():
    folder = pathlib.Path(sys.argv[1])
    best = {}
    for p in sorted(folder.glob("np*-run*.json")):
        n, wall, stages = load(p)
        if n not in best or wall < best[n][0]:
            best[n] = (wall, stages, p.name)
    ns = sorted(best)
    if not ns or ns[0] != 1:
        sys.exit("need a 1-rank run as the baseline")
    # stages that take a noticeable share of the 1-rank time
    shown = [(k, label) for k, label in STAGES if best[1][1][k] > 0.02 * best[1][0]]
    series = [("wall", "total (wall)", [best[n][0] for n in ns])]
    series += [(k, label, [best[n][1][k] for n in ns]) for k, label in shown]

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, label, times in series:
        speedup = [times[0] / t if t > 0 else float("nan") for t in times]
        eff = [s / n for s, n in zip(speedup, ns)]
        style = dict(marker="o", linewidth=2.5 if key == "wall" else 1.5, color="black" if key == "wall" else None)
        ax1.plot(ns, speedup, label=label, **style)
        ax2.plot(ns, eff, label=label, **style)
    ax1.plot(ns, ns, linestyle=":", color="grey", label="ideal")
    ax2.axhline(1.0, linestyle=":", color="grey")
    machine = (folder / "machine.txt").read_text() if (folder / "machine.txt").exists() else ""
    cores = re.search(r"cores: (\d+)", machine)
    backend = re.search(r"backend: (\S+)", machine)
    title = f"sstclim scale test ({backend.group(1) if backend else '?'} backend"
    title += f", {cores.group(1)} cores" if cores else ""
    loads = [float(m) for m in re.findall(r"load \w+: (\S+)", (folder / "load.txt").read_text())] \
        if (folder / "load.txt").exists() else []
    title += f", 1-min load {min(loads):.1f}-{max(loads):.1f})" if loads else ")"
    extra = re.search(r"extra run flags: (.+)", machine)
    if extra and extra.group(1).strip():
        title += f"  [{extra.group(1).strip()}]"
    for ax, ylabel in [(ax1, "speedup vs 1 rank"), (ax2, "parallel efficiency")]:
        ax.set_xlabel("MPI ranks")
        ax.set_ylabel(ylabel)
        ax.set_xticks(ns)
        ax.grid(alpha=0.3)
    ax2.set_ylim(0, 1.3)
    ax1.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(folder / "scale.png", dpi=110)

    lines = ["| ranks | wall s | " + " | ".join(f"{label} s" for _, label in shown) + " | speedup (wall) | efficiency |",
             "|" + "---|" * (len(shown) + 4)]
    for n in ns:
        wall, stages, _ = best[n]
        s = best[1][0] / wall
        lines.append(f"| {n} | {wall:.2f} | " + " | ".join(f"{stages[k]:.2f}" for k, _ in shown)
                     + f" | {s:.2f} | {s / n:.2f} |")
    text = "\n".join(lines) + "\n\nStage times are the slowest rank's; wall is rank 0's, start to outputs in place.\n"
    (folder / "summary.md").write_text(text)
    print(text)


main()
