#!/usr/bin/env python3
"""Bar charts of a scripts/bench/gpu-baselines.sh result folder (or one results.json): kernel time
(time.png), achieved bandwidth as pool bytes / time (bandwidth.png) and the P90 and mean error
against our exact result (error.png). Needs only matplotlib; run it where the JSON was copied,
not on the GPU node.

    scripts/bench/baselines-plot.py DIR_OR_JSON [OUT_DIR]"""
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"ours": "#1b7837", "exact": "#2166ac", "approx": "#b2182b"}


def colour(k):
    return COLOURS["ours"] if k["key"] == "ours" else COLOURS["exact" if k["exact"] else "approx"]


def subtitle(j):
    return (f"{j['device']}\n{j['grid'][0]}x{j['grid'][1]} cells, {j['years']} years, {j['target_days']} target days, "
            f"{j['window_days']}-day windows, f32 pool {j['pool_bytes'] / 1e9:.1f} GB; median of {j['repeats']}, "
            f"{j['date'][:10]}")


def bars(ax, labels, values, colours, fmt):
    y = range(len(labels))
    ax.barh(y, values, color=colours)
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    for i, v in enumerate(values):
        ax.text(v, i, " " + fmt(i, v), va="center", fontsize=8)


def main():
    src = pathlib.Path(sys.argv[1])
    path = src / "results.json" if src.is_dir() else src
    out = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else path.parent
    j = json.loads(path.read_text())
    ks = j["kernels"]
    labels = [k["name"] for k in ks]
    cols = [colour(k) for k in ks]

    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.6 * len(ks)))
    ms = [k["ms_median"] for k in ks]
    bars(ax, labels, ms, cols, lambda i, v: f"{v:.2f} ms ({ks[i]['time_over_ours']:.2f}x ours)")
    ax.set_xscale("log")
    ax.set_xlabel("kernel time, ms (log scale; green: ours, blue: exact baselines, red: approximate)")
    ax.set_xlim(min(ms) / 3, max(ms) * 20)
    ax.set_title("Kernel time\n" + subtitle(j), fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "time.png", dpi=130)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.6 * len(ks)))
    bw = [k["pool_gb_per_s"] for k in ks]
    bars(ax, labels, bw, cols, lambda i, v: f"{v:.0f} GB/s")
    probe = j.get("probe")
    if probe:
        ax.axvline(probe["d2d_gb_per_s"], color="grey", ls="--")
        ax.text(probe["d2d_gb_per_s"], len(ks) - 0.5, " device copy (read+write)", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(min(bw) / 3, max(bw + [probe["d2d_gb_per_s"] if probe else 0]) * 8)
    ax.set_xlabel("pool bytes / kernel time, GB/s (log scale)")
    ax.set_title("Achieved bandwidth\n" + subtitle(j), fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "bandwidth.png", dpi=130)
    plt.close(fig)

    others = [k for k in ks if k.get("pct_error")]
    fig, axes = plt.subplots(1, 2, figsize=(13, 1.2 + 0.6 * len(others)), sharey=True)
    floor = 1e-12  # log axes cannot show 0: exact results are drawn at the floor and labelled
    for ax, stat, title in [(axes[0], "pct_error", f"P{j['percentile']}"), (axes[1], "mean_error", "mean")]:
        lab = [k["name"] for k in others]
        y = range(len(others))
        mx = [max(k[stat]["max_abs"], floor) for k in others]
        rms = [max(k[stat]["rms"], floor) for k in others]
        ax.barh([i - 0.2 for i in y], mx, height=0.4, color=[colour(k) for k in others], label="max abs")
        ax.barh([i + 0.2 for i in y], rms, height=0.4, color=[colour(k) for k in others], alpha=0.5, label="RMS")
        for i, k in enumerate(others):
            e = k[stat]
            txt = "0 (bitwise equal)" if e["max_abs"] == 0 else f"max {e['max_abs']:.2e}, rms {e['rms']:.2e}"
            ax.text(mx[i], i - 0.2, " " + txt, va="center", fontsize=8)
        ax.set_yticks(list(y), lab)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlim(floor / 2, max(mx + [1.0]) * 1e4)
        ax.set_xlabel(f"{title} error against ours, C (log; solid: max abs, light: RMS)")
    fig.suptitle("Error against our exact result\n" + subtitle(j), fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "error.png", dpi=130)
    plt.close(fig)
    print(f"wrote {out / 'time.png'}, {out / 'bandwidth.png'}, {out / 'error.png'}")


if __name__ == "__main__":
    main()
