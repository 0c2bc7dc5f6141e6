#!/usr/bin/env python3
"""Max abs differences of the CPU peers' outputs from sstclim's (scripts/bench/cpu-peers.sh).

Usage: peers_compare.py WORK_DIR OUT_JSON [--doys 152-243] [--half-window 5] [--years 1991-2020] [--data DIR]

Reads from WORK_DIR:
  out-sstclim/{mean,p90}_doyDDD.nc            sstclim run (per-doy layout)
  out-numpy/{mean,p90,count}.npy             scripts/bench/peers_numpy.py (count = valid samples N)
  out-xclim/{mean,p90}.npy                   scripts/bench/peers_xclim.py
  cdo/mean.nc, cdo/p90-exact.nc, cdo/p90-default.nc   CDO ydrunmean / ydrunpctl outputs
Only target days D in --doys are compared; a CDO output step is matched to D by the ordinal day
of year of its date. Per statistic: max |tool - sstclim| over cells where both have a value, the
cell and day where it occurs, the RMSE, and the number of cells where only one has a value.
"""
import argparse
import datetime
import json
import os

import netCDF4
import numpy as np


def read_sstclim(d, stat, doys):
    out = []
    for D in doys:
        with netCDF4.Dataset(os.path.join(d, f"{stat}_doy{D:03d}.nc")) as nc:
            # `{input}_{stat}` (sstclim's output::names), `stat` in outputs of older versions
            name = next((n for n in nc.variables if n == stat or n.endswith("_" + stat)), stat)
            v = nc.variables[name]
            x = np.ma.filled(v[...].astype(np.float64), np.nan)
            out.append(x.reshape(x.shape[-2:]))
    return np.stack(out)


def read_cdo(path):
    """CDO's ydrun* output steps keyed by (month, day) of their date (CDO groups windows by the
    calendar date of their middle step, 31 * (month - 1) + day, not by ordinal day)."""
    with netCDF4.Dataset(path) as nc:
        t = nc.variables["time"]
        dates = netCDF4.num2date(t[:], t.units, getattr(t, "calendar", "standard"))
        var = [n for n, v in nc.variables.items() if v.ndim >= 3][0]
        v = nc.variables[var]
        x = np.ma.filled(v[...].astype(np.float64), np.nan)
        x = x.reshape((x.shape[0],) + x.shape[-2:])
        x[~np.isfinite(x)] = np.nan
    return {(d.month, d.day): (x[i], str(d)) for i, d in enumerate(dates)}


def pick(steps, doys, leap):
    """The steps for target days `doys`: day D is the D-th day of a non-leap year (ordinal
    reading, leap=False) or of a leap year (hobday366 reading, leap=True)."""
    base = datetime.date(2000 if leap else 2001, 1, 1)
    out, names = [], []
    for D in doys:
        d = base + datetime.timedelta(days=D - 1)
        if (d.month, d.day) not in steps:
            raise SystemExit(f"no CDO output step for {d.month:02d}-{d.day:02d} (day {D})")
        x, name = steps[(d.month, d.day)]
        out.append(x)
        names.append(name)
    return np.stack(out), (names[0], names[-1])


def valid_counts(data, years, doys, h, calendar):
    """N, the valid samples of every (target day, cell), straight from the input files."""
    y0, y1 = years
    cache = {}

    def valid(y, o):
        if (y, o) not in cache:
            with netCDF4.Dataset(os.path.join(data, f"sst_{y}_{o:03d}.nc")) as nc:
                v = nc.variables["sst"]
                v.set_auto_mask(False)
                x = np.asarray(v[...], dtype=np.float64)
                cache[(y, o)] = np.isfinite(x.reshape(x.shape[-2:]))
        return cache[(y, o)]

    n = None
    for i, D in enumerate(doys):
        for y in range(y0, y1 + 1):
            leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
            anchor = D - 1 if (calendar == "hobday366" and not leap and D >= 61) else D
            for o in range(anchor - h, anchor + h + 1):
                m = valid(y, o)
                if n is None:
                    n = np.zeros((len(doys),) + m.shape, dtype=np.int32)
                n[i] += m
    return n


def diff(a, ref, doys, lat, lon):
    both = np.isfinite(a) & np.isfinite(ref)
    only = int(np.count_nonzero(np.isfinite(a) != np.isfinite(ref)))
    d = np.where(both, np.abs(a - ref), 0.0)
    i = np.unravel_index(int(np.argmax(d)), d.shape)
    return {
        "max_abs_diff": float(d[i]),
        "at": {"doy": int(doys[i[0]]), "lat": float(lat[i[1]]), "lon": float(lon[i[2]])},
        "rmse": float(np.sqrt(np.mean(d[both] ** 2))) if both.any() else None,
        "cells_compared": int(np.count_nonzero(both)),
        "cells_differing": int(np.count_nonzero(d > 0)),
        "fill_mismatches": only,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("--doys", default="152-243")
    ap.add_argument("--half-window", type=int, default=5)
    ap.add_argument("--years", default="1991-2020")
    ap.add_argument("--data", help="input directory (to count valid samples for the CDO mean check)")
    args = ap.parse_args()
    d0, d1 = (int(x) for x in args.doys.split("-"))
    doys = list(range(d0, d1 + 1))
    y0, y1 = (int(x) for x in args.years.split("-"))
    slots = (y1 - y0 + 1) * (2 * args.half_window + 1)
    w = args.work
    with netCDF4.Dataset(os.path.join(w, "out-sstclim", f"mean_doy{d0:03d}.nc")) as nc:
        lat, lon = nc.variables["lat"][:], nc.variables["lon"][:]
    ref = {s: read_sstclim(os.path.join(w, "out-sstclim"), s, doys) for s in ("mean", "p90")}
    res = {"doys": [d0, d1], "reference": "sstclim run --backend cpu (pool f64)", "tools": {}}

    def add(tool, stat, a, note=None):
        r = diff(a, ref[stat], doys, lat, lon)
        if note:
            r["note"] = note
        res["tools"].setdefault(tool, {})[stat] = r

    count = None
    for tool in ("numpy", "xclim"):
        d = os.path.join(w, f"out-{tool}")
        if os.path.exists(os.path.join(d, "p90.npy")):
            for s in ("mean", "p90"):
                add(tool, s, np.load(os.path.join(d, f"{s}.npy")))
    if os.path.exists(os.path.join(w, "out-numpy", "count.npy")):
        count = np.load(os.path.join(w, "out-numpy", "count.npy")).astype(np.float64)
        res["valid_samples"] = {"min": int(count.min()), "max": int(count.max()),
                                "cells_with_all_slots_valid": int(np.count_nonzero(count == slots)),
                                "cells_with_some_valid": int(np.count_nonzero(count > 0)), "slots": slots}
    cdo = os.path.join(w, "cdo")
    steps = {}
    for name in ("mean", "p90-exact", "p90-default"):
        if os.path.exists(os.path.join(cdo, f"{name}.nc")):
            steps[name] = read_cdo(os.path.join(cdo, f"{name}.nc"))
    # 1. CDO's day-of-year keys read as ordinal days of a non-leap year, against sstclim's default
    #    (ordinal) run: the comparison a user would make; leap years differ by one day.
    for name, tool, stat in (("mean", "cdo-exact", "mean"), ("mean", "cdo-default", "mean"),
                             ("p90-exact", "cdo-exact", "p90"), ("p90-default", "cdo-default", "p90")):
        if name in steps:
            x, dates = pick(steps[name], doys, leap=False)
            add(tool, stat, x, f"CDO steps {dates[0]}..{dates[1]} (month-day keys as non-leap ordinal days)")
    # 2. Like for like: against sstclim --calendar hobday366 (every year's window centred on the
    #    same calendar date, as CDO groups them), target days 153..243 of a 366-day year.
    d366 = os.path.join(w, "out-sstclim-hobday366")
    if steps and os.path.exists(d366):
        doys366 = sorted(int(f[8:11]) for f in os.listdir(d366) if f.startswith("mean_doy"))
        ref366 = {s: read_sstclim(d366, s, doys366) for s in ("mean", "p90")}
        n366 = valid_counts(args.data, (y0, y1), doys366, args.half_window, "hobday366") if args.data else None
        sub = {"doys": [doys366[0], doys366[-1]], "reference": "sstclim run --calendar hobday366", "tools": {}}
        for name, tool, stat in (("mean", "cdo", "mean"), ("p90-exact", "cdo-exact", "p90"),
                                 ("p90-default", "cdo-default", "p90")):
            if name not in steps:
                continue
            x, dates = pick(steps[name], doys366, leap=True)
            r = diff(x, ref366[stat], doys366, lat, lon)
            r["note"] = f"CDO steps {dates[0]}..{dates[1]}"
            sub["tools"].setdefault(tool, {})[stat] = r
            if stat == "p90" and n366 is not None:
                # where CDO's small-sample behaviour (no clamping for N <= 4, missing where
                # min == max) cannot play a part
                big = n366 >= 5
                sub["tools"][tool]["p90_cells_with_N_ge_5"] = diff(
                    np.where(big, x, np.nan), np.where(big, ref366["p90"], np.nan), doys366, lat, lon)
            if stat == "mean" and n366 is not None:
                # CDO's ydrunmean divides the window sums by the number of time steps (slots), not
                # by the number of valid samples: test that against sstclim's mean * N / slots.
                sub["tools"][tool]["mean_vs_sstclim_mean_times_N_over_slots"] = diff(
                    x, ref366["mean"] * n366 / slots, doys366, lat, lon)
                full = n366 == slots
                sub["tools"][tool]["mean_cells_with_all_slots_valid"] = diff(
                    np.where(full, x, np.nan), np.where(full, ref366["mean"], np.nan), doys366, lat, lon)
        res["cdo_like_for_like"] = sub
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)
    for tool, stats in res["tools"].items():
        print(tool, {s: (v["max_abs_diff"], v["fill_mismatches"]) for s, v in stats.items()})
    for tool, stats in res.get("cdo_like_for_like", {}).get("tools", {}).items():
        print("like-for-like", tool, {s: (v["max_abs_diff"], v["fill_mismatches"]) for s, v in stats.items()})


if __name__ == "__main__":
    main()
