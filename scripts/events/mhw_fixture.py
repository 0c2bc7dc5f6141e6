#!/usr/bin/env python3
"""The marineHeatWaves fixture of tests/it/events/mhw.rs: a few synthetic cells run through
marineHeatWaves' own detect() and blockAverage(), with the series, the climatology it computed
(per day of the 366-day year) and its events and block statistics, as JSON.

marineHeatWaves.py is github.com/ecjoliver/marineHeatWaves at commit
d7292bf08ade0af213fa760b0d7e4adfe5f52894 (not copied here); pass its path. Needs numpy and
scipy (numpy 2 lacks np.NaN, which marineHeatWaves uses: it is put back before the import).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy scipy
    /tmp/venv/bin/python scripts/events/mhw_fixture.py PATH/TO/marineHeatWaves.py \
        tests/fixtures/events/mhw_cells.json

It also times detect() per cell for 41 years (1982-2022) and prints it, for the benchmark's
speedup figure (bench-results/runs/2026-12-02-vm-events/README.md).
"""
import importlib.util
import json
import math
import sys
import time
from datetime import date

import numpy as np

if not hasattr(np, "NaN"):
    np.NaN = np.nan


def load(path):
    spec = importlib.util.spec_from_file_location("marineHeatWaves", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def series(rng, t, base, amp, sd, phi, missing):
    """An AR(1) anomaly on a seasonal cycle, rounded to 0.01 (as OSTIA-like data is)."""
    doy = np.array([date.fromordinal(int(x)).timetuple().tm_yday for x in t])
    clim = base + amp * np.sin(2 * np.pi * (doy - 80) / 365.25)
    a = np.zeros(len(t))
    for i in range(1, len(t)):
        a[i] = phi * a[i - 1] + sd * math.sqrt(1 - phi * phi) * rng.standard_normal()
    # a warming trend, so that late years hold more (and longer, joined) events
    temp = np.round(clim + a + 0.6 * (t - t[0]) / (t[-1] - t[0]), 2)
    temp[rng.random(len(t)) < missing] = np.nan
    return temp


def nan_to_none(x):
    x = float(x)
    return None if math.isnan(x) else x


def main():
    mhw = load(sys.argv[1])
    out_path = sys.argv[2]
    rng = np.random.default_rng(20261202)
    t = np.arange(date(1982, 1, 1).toordinal(), date(1991, 12, 31).toordinal() + 1)
    # (base, amplitude, sd, persistence, missing fraction, cold)
    cells = [
        (18.0, 3.0, 0.8, 0.90, 0.00, False),
        (12.0, 5.0, 1.2, 0.95, 0.03, False),
        (25.0, 1.0, 0.4, 0.80, 0.01, False),
        (12.0, 5.0, 1.2, 0.95, 0.03, True),
        (2.0, 0.5, 0.3, 0.97, 0.00, True),
    ]
    doy366 = np.array([
        date(2012, date.fromordinal(int(x)).month, date.fromordinal(int(x)).day).timetuple().tm_yday for x in t
    ])
    fixture = {
        "source": "marineHeatWaves d7292bf08ade0af213fa760b0d7e4adfe5f52894 detect() and blockAverage(), defaults; climatologyPeriod 1983-1990",
        "first_year": 1982,
        "last_year": 1991,
        "cells": [],
    }
    cat_number = {"Moderate": 1, "Strong": 2, "Severe": 3, "Extreme": 4}
    for base, amp, sd, phi, missing, cold in cells:
        temp = series(rng, t, base, amp, sd, phi, missing)
        ev, clim = mhw.detect(t, temp.copy(), climatologyPeriod=[1983, 1990], coldSpells=cold)
        block = mhw.blockAverage(t, ev)
        seas = np.full(366, np.nan)
        thresh = np.full(366, np.nan)
        seas[doy366 - 1] = clim["seas"]
        thresh[doy366 - 1] = clim["thresh"]
        events = []
        for k in range(ev["n_events"]):
            e = {name: nan_to_none(ev[name][k]) for name in (
                "duration", "duration_moderate", "duration_strong", "duration_severe", "duration_extreme",
                "intensity_max", "intensity_mean", "intensity_var", "intensity_cumulative",
                "intensity_max_relThresh", "intensity_mean_relThresh", "intensity_var_relThresh",
                "intensity_cumulative_relThresh", "intensity_max_abs", "intensity_mean_abs",
                "intensity_var_abs", "intensity_cumulative_abs", "rate_onset", "rate_decline")}
            e["index_start"] = int(ev["index_start"][k])
            e["index_end"] = int(ev["index_end"][k])
            e["index_peak"] = int(ev["index_peak"][k])
            e["category"] = cat_number[str(ev["category"][k])]
            events.append(e)
        stats = ["count", "duration", "intensity_max", "intensity_max_max", "intensity_mean", "intensity_var",
                 "intensity_cumulative", "intensity_max_relThresh", "intensity_mean_relThresh",
                 "intensity_var_relThresh", "intensity_cumulative_relThresh", "intensity_max_abs",
                 "intensity_mean_abs", "intensity_var_abs", "intensity_cumulative_abs", "rate_onset",
                 "rate_decline", "total_days", "total_icum"]
        fixture["cells"].append({
            "cold": cold,
            "temp": [nan_to_none(x) for x in temp],
            "seas": [nan_to_none(x) for x in seas],
            "thresh": [nan_to_none(x) for x in thresh],
            "events": events,
            "block": {s: [nan_to_none(x) for x in block[s]] for s in stats},
        })
        print(f"cell base {base} cold {cold}: {ev['n_events']} events", file=sys.stderr)
    with open(out_path, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
    # marineHeatWaves' time per cell over 41 years (what `sstclim events` replaces)
    t41 = np.arange(date(1982, 1, 1).toordinal(), date(2022, 12, 31).toordinal() + 1)
    walls, cpus = [], []
    for k in range(5):
        temp = series(rng, t41, 18.0, 3.0, 0.8, 0.9, 0.01)
        w, c = time.perf_counter(), time.process_time()
        ev, _ = mhw.detect(t41, temp, climatologyPeriod=[1983, 2012])
        mhw.blockAverage(t41, ev)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    print("marineHeatWaves detect()+blockAverage(), 41 years, per cell: wall s " + " ".join(f"{x:.3f}" for x in walls)
          + "; CPU s " + " ".join(f"{x:.3f}" for x in cpus))


if __name__ == "__main__":
    main()
