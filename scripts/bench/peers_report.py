#!/usr/bin/env python3
"""Report of the CPU peers benchmark (scripts/bench/cpu-peers.sh).

Usage: peers_report.py RESULT_DIR
Reads RESULT_DIR/raw/ (NAME.cmd, NAME.time from /usr/bin/time -v, NAME.load from uptime,
sstclim's NAME.json, diffs.json, machine.txt) and writes RESULT_DIR/results.json,
RESULT_DIR/results.md, RESULT_DIR/time.png and RESULT_DIR/memory.png.
"""
import json
import os
import re
import statistics
import sys


def parse_time(path):
    """Wall seconds, user + system seconds and peak RSS (bytes) from /usr/bin/time -v."""
    out = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("Elapsed (wall clock) time"):
            t = line.rsplit(": ", 1)[1].split(":")
            out["wall_s"] = sum(float(x) * 60 ** i for i, x in enumerate(reversed(t)))
        elif line.startswith("Maximum resident set size"):
            out["peak_rss_bytes"] = int(line.rsplit(": ", 1)[1]) * 1024
        elif line.startswith("User time"):
            out["user_s"] = float(line.rsplit(": ", 1)[1])
        elif line.startswith("System time"):
            out["sys_s"] = float(line.rsplit(": ", 1)[1])
        elif line.startswith("Exit status"):
            out["exit_status"] = int(line.rsplit(": ", 1)[1])
    return out


def step(raw, name):
    s = parse_time(os.path.join(raw, f"{name}.time"))
    s["command"] = open(os.path.join(raw, f"{name}.cmd")).read().strip()
    load = open(os.path.join(raw, f"{name}.load")).read().strip()
    s["uptime_before"] = load
    m = re.search(r"load average: ([\d.]+), ([\d.]+), ([\d.]+)", load)
    s["load1_before"] = float(m.group(1)) if m else None
    j = os.path.join(raw, f"{name}.json")
    if os.path.exists(j):
        s["sstclim_report"] = json.load(open(j))
    return s


def gb(b):
    return b / 1e9


def load_range(steps):
    """Smallest and largest 1-minute load average recorded before a step."""
    loads = [s["load1_before"] for s in steps.values() if s.get("load1_before") is not None]
    return (min(loads), max(loads)) if loads else (float("nan"), float("nan"))


def main():
    res = sys.argv[1]
    raw = os.path.join(res, "raw")
    names = sorted((f[:-5] for f in os.listdir(raw) if f.endswith(".time")),
                   key=lambda n: os.path.getmtime(os.path.join(raw, f"{n}.time")))  # in the order run
    steps = {n: step(raw, n) for n in names}
    machine = dict(line.rstrip("\n").split(": ", 1) for line in open(os.path.join(raw, "machine.txt")) if ": " in line)
    diffs = json.load(open(os.path.join(raw, "diffs.json")))

    reps = sorted((n for n in names if re.fullmatch(r"sstclim-\d+", n)), key=lambda n: int(n.split("-")[1]))
    walls = [steps[n]["wall_s"] for n in reps]
    tools = {
        "sstclim": {
            "label": "sstclim run --backend cpu",
            "steps": reps,
            "wall_s": statistics.median(walls),
            "wall_s_runs": walls,
            "cpu_s": statistics.median(steps[n]["user_s"] + steps[n]["sys_s"] for n in reps),
            "peak_rss_bytes": max(steps[n]["peak_rss_bytes"] for n in reps),
            "timing": "median of %d runs; peak RSS the largest of them" % len(reps),
        }
    }
    chains = {
        "cdo-exact": ("CDO exact (hazen, 660 bins)", ["cdo-merge", "cdo-min", "cdo-max", "cdo-mean", "cdo-pctl-exact"]),
        "cdo-default": ("CDO default (nrank, 101 bins)", ["cdo-merge", "cdo-min", "cdo-max", "cdo-mean", "cdo-pctl-default"]),
    }
    for key, (label, chain) in chains.items():
        if all(n in steps for n in chain):
            tools[key] = {
                "label": label,
                "steps": chain,
                "wall_s": sum(steps[n]["wall_s"] for n in chain),
                "cpu_s": sum(steps[n]["user_s"] + steps[n]["sys_s"] for n in chain),
                "peak_rss_bytes": max(steps[n]["peak_rss_bytes"] for n in chain),
                "timing": "sum of the steps' wall times; peak RSS the largest step's",
            }
    for key, label in (("xclim", "xclim percentile_doy + xarray mean (dask)"), ("numpy", "numpy nanpercentile/nanmean")):
        if key in steps:
            tools[key] = {"label": label, "steps": [key], "wall_s": steps[key]["wall_s"],
                          "cpu_s": steps[key]["user_s"] + steps[key]["sys_s"],
                          "peak_rss_bytes": steps[key]["peak_rss_bytes"], "timing": "one run"}
            j = os.path.join(raw, f"{key}.out")
            try:
                tools[key]["internal"] = json.loads(open(j).read().strip().splitlines()[-1])
            except (ValueError, IndexError):
                pass
    ref = tools["sstclim"]
    for key, t in tools.items():
        t["time_ratio_vs_sstclim"] = t["wall_s"] / ref["wall_s"]
        t["cpu_time_ratio_vs_sstclim"] = t["cpu_s"] / ref["cpu_s"]
        t["memory_ratio_vs_sstclim"] = t["peak_rss_bytes"] / ref["peak_rss_bytes"]
        if key in diffs["tools"]:
            t["max_abs_diff"] = {s: v["max_abs_diff"] for s, v in diffs["tools"][key].items()}
            t["fill_mismatches"] = {s: v["fill_mismatches"] for s, v in diffs["tools"][key].items()}
    targets = {}
    if "cdo-exact" in tools:
        r = tools["cdo-exact"]["time_ratio_vs_sstclim"]
        targets["sstclim >= 30x faster than CDO's exact chain"] = {
            "ratio": r, "met": r >= 30, "cpu_time_ratio": tools["cdo-exact"]["cpu_time_ratio_vs_sstclim"]}
    peers = [k for k in tools if k != "sstclim"]
    lowest = min(peers, key=lambda k: tools[k]["peak_rss_bytes"]) if peers else None
    if lowest:
        targets["sstclim uses less memory than every peer"] = {
            "lowest_peer": lowest, "ratio_lowest_peer_over_sstclim": tools[lowest]["memory_ratio_vs_sstclim"],
            "met": tools[lowest]["peak_rss_bytes"] > ref["peak_rss_bytes"]}
    out = {"machine": machine, "tools": tools, "targets": targets, "steps": steps, "diffs": diffs,
           "note": "load average recorded before every step (see load_range)",
           "load_range": load_range(steps)}
    json.dump(out, open(os.path.join(res, "results.json"), "w"), indent=1)
    charts(res, tools, steps)
    markdown(res, out)
    for k, t in tools.items():
        print(f"{k:12s} {t['wall_s']:9.1f} s {gb(t['peak_rss_bytes']):7.2f} GB  x{t['time_ratio_vs_sstclim']:.1f} time"
              f"  x{t['memory_ratio_vs_sstclim']:.2f} mem  {t.get('max_abs_diff', '')}")
    print(json.dumps(targets))


def charts(res, tools, steps):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(tools)
    labels = [k.replace("cdo-", "CDO ") for k in keys]
    colors = ["tab:green" if k == "sstclim" else "tab:gray" for k in keys]
    for what, field, unit, scale, fname in (
        ("Wall time", "wall_s", "s", 1.0, "time.png"),
        ("Peak memory (max RSS)", "peak_rss_bytes", "GB", 1e-9, "memory.png"),
    ):
        vals = [tools[k][field] * scale for k in keys]
        fig, ax = plt.subplots(figsize=(7, 3.6))
        bars = ax.bar(labels, vals, color=colors)
        for b, v, k in zip(bars, vals, keys):
            r = tools[k]["time_ratio_vs_sstclim" if field == "wall_s" else "memory_ratio_vs_sstclim"]
            ax.annotate(f"{v:.3g} {unit}\n({r:.3g}x sstclim)", (b.get_x() + b.get_width() / 2, v), ha="center",
                        va="bottom", fontsize=8)
        ax.set_ylabel(f"{what} [{unit}]")
        lo, hi = load_range(steps)
        ax.set_title(f"{what}: reference job, 360x181 x 30 y x 102 d, 2 cores, load {lo:.1f}-{hi:.1f}", fontsize=9)
        ax.margins(y=0.25)
        fig.tight_layout()
        fig.savefig(os.path.join(res, fname), dpi=110)
        plt.close(fig)


def fmt(x):
    if x is None:
        return "–"
    if x == 0:
        return "0"
    return f"{x:.2g}" if abs(x) < 0.01 else f"{x:.3f}"


def markdown(res, out):
    m, tools, steps, diffs = out["machine"], out["tools"], out["steps"], out["diffs"]
    L = []
    L.append(f"# CPU peers: sstclim vs CDO, xclim, numpy — {m.get('date_utc', '')[:10]}")
    L.append("")
    L.append("Reproduce with `bash scripts/bench/cpu-peers.sh` (writes this folder anew). Raw files in")
    L.append("[`raw/`](raw/): `NAME.cmd`, `NAME.time` (`/usr/bin/time -v`), `NAME.load` (`uptime` just before),")
    L.append("`NAME.out`/`NAME.err`, sstclim's `NAME.json`, `diffs.json`, `machine.txt`, `lscpu.txt`;")
    L.append("everything below in [`results.json`](results.json).")
    L.append("")
    L.append(f"**Machine**: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory')} RAM, {m.get('os')}, "
             f"kernel {m.get('kernel')}. 1-minute load average before the steps: "
             f"{load_range(steps)[0]:.2f}-{load_range(steps)[1]:.2f} (each step's in the step table; a load well above "
             "1 means other work shared the 2 cores); sstclim's time is the median of its runs. "
             f"Date {m.get('date_utc')}.")
    L.append("")
    L.append(f"**Versions**: {m.get('sstclim')}; {m.get('cdo')}; xclim {m.get('xclim')}, xarray {m.get('xarray')}, "
             f"dask {m.get('dask')}, numpy {m.get('numpy')}, netCDF4 {m.get('netCDF4')}, cftime {m.get('cftime')}, "
             f"{m.get('python')}; libnetcdf {m.get('libnetcdf')}.")
    L.append("")
    L.append("**Job**: `sstclim generate --grid 360x181 --years 1991-2020 --doys 147-248 --time-dim` (3060 files,")
    L.append("float64 °C, NaN fill, 30 % land, 2 % random gaps, 97 % gaps poleward of 70°); target days 152..243,")
    L.append("11-day window (h = 5), mean and P90 (Hyndman-Fan type 5). Every tool starts from the per-day files")
    L.append("with a warm page cache.")
    L.append("")
    L.append("## Results")
    L.append("")
    L.append("| tool | wall | CPU (user+sys) | peak RSS | wall / sstclim | CPU / sstclim | memory / sstclim | max abs diff mean | max abs diff P90 |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for k, t in tools.items():
        d = t.get("max_abs_diff", {})
        fm = t.get("fill_mismatches", {})
        cell = lambda s: ("reference" if k == "sstclim" else fmt(d.get(s)) + (f" ({fm[s]} fill mismatches)" if fm.get(s) else ""))
        L.append(f"| {t['label']} | {t['wall_s']:.1f} s | {t['cpu_s']:.1f} s | {gb(t['peak_rss_bytes']):.2f} GB | "
                 f"{t['time_ratio_vs_sstclim']:.1f}x | {t['cpu_time_ratio_vs_sstclim']:.1f}x | "
                 f"{t['memory_ratio_vs_sstclim']:.2f}x | {cell('mean')} | {cell('p90')} |")
    L.append("")
    L.append(f"sstclim runs: {', '.join(f'{w:.1f} s' for w in tools['sstclim']['wall_s_runs'])} (median reported).")
    L.append("Differences are over target days 152..243 and all cells where both tools have a value;")
    L.append("\"fill mismatches\" counts (day, cell) pairs where only one of the two has a value.")
    L.append("")
    L.append("![wall time](time.png) ![peak memory](memory.png)")
    L.append("")
    L.append("### Targets")
    L.append("")
    for name, t in out["targets"].items():
        if "ratio" in t:
            L.append(f"- {name}: **{t['ratio']:.1f}x** in wall time ({t['cpu_time_ratio']:.1f}x in CPU time) — "
                     f"{'met' if t['met'] else 'MISSED'}.")
        else:
            L.append(f"- {name}: lowest peer {t['lowest_peer']} uses {t['ratio_lowest_peer_over_sstclim']:.2f}x "
                     f"sstclim's peak RSS — {'met' if t['met'] else 'MISSED'}.")
    sc = tools["sstclim"]
    rep = [steps[n]["sstclim_report"]["stage_seconds"] for n in sc["steps"] if "sstclim_report" in steps[n]]
    if rep:
        med = lambda k: statistics.median(r[k] for r in rep)
        L.append(f"- sstclim's stages (median of its runs): read {med('read'):.1f} s, compute {med('compute'):.1f} s, "
                 f"write {med('write'):.1f} s; its wall time was {sc['wall_s'] / sc['cpu_s']:.2f}x its CPU time "
                 "(2 threads on 2 cores)" + (
                     f", CDO's exact chain's {tools['cdo-exact']['wall_s'] / tools['cdo-exact']['cpu_s']:.2f}x "
                     "(mostly one thread)" if "cdo-exact" in tools else "") + ".")
    L.append("")
    like = diffs.get("cdo_like_for_like")
    if like:
        L.append(f"### CDO like for like (against `sstclim run --calendar hobday366`, days {like['doys'][0]}..{like['doys'][1]})")
        L.append("")
        L.append("| CDO output | max abs diff | RMSE | cells compared | fill mismatches | worst at |")
        L.append("|---|---|---|---|---|---|")
        what = {
            "mean": "`ydrunmean` − sstclim mean",
            "mean_vs_sstclim_mean_times_N_over_slots": "`ydrunmean` − sstclim mean × N / 330",
            "mean_cells_with_all_slots_valid": "`ydrunmean` − sstclim mean, cells with all 330 samples valid",
            "p90": "`ydrunpctl` − sstclim P90",
            "p90_cells_with_N_ge_5": "`ydrunpctl` − sstclim P90, cells with N ≥ 5",
        }
        for tool, stats in like["tools"].items():
            for s, v in stats.items():
                at = v["at"]
                L.append(f"| {tool}: {what.get(s, s)} | {fmt(v['max_abs_diff'])} | {fmt(v['rmse'])} | {v['cells_compared']} | "
                         f"{v['fill_mismatches']} | day {at['doy']}, {at['lat']}°N {at['lon']}°E |")
        L.append("")
    L.append("## Steps")
    L.append("")
    L.append("| step | wall | user+sys | peak RSS | load (1 min) before | command |")
    L.append("|---|---|---|---|---|---|")
    for n, s in steps.items():
        L.append(f"| {n} | {s['wall_s']:.1f} s | {s.get('user_s', 0) + s.get('sys_s', 0):.1f} s | "
                 f"{gb(s['peak_rss_bytes']):.2f} GB | {s['load1_before']} | `{s['command']}` |")
    L.append("")
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers_semantics.md")
    if os.path.exists(notes):
        L.append(open(notes).read().rstrip())
        L.append("")
    open(os.path.join(res, "results.md"), "w").write("\n".join(L))


if __name__ == "__main__":
    main()
