#!/usr/bin/env python3
"""The whole chain against marineHeatWaves: `sstclim run --layout climatology` (marineHeatWaves'
defaults) then `sstclim events`, on a generated dataset, compared cell by cell with
marineHeatWaves' own detect() on the same decoded series (its climatology computed by itself).

    python3 scripts/events/chain_check.py marineHeatWaves.py DATA_DIR CLIM_YEARS EVENTS_DIR [--cold] [--cells N]

DATA_DIR holds sst_{year}_{doy}.nc (sstclim generate); EVENTS_DIR the events.nc (events_cold.nc)
of the same years. Prints how many cells agree on every event and the largest difference.
"""
import argparse
import glob
import importlib.util
import os
import re
from datetime import date

import netCDF4
import numpy as np

if not hasattr(np, "NaN"):
    np.NaN = np.nan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mhw")
    ap.add_argument("data")
    ap.add_argument("clim_years")
    ap.add_argument("events")
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--cells", type=int, default=60)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("mhw", a.mhw)
    mhw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mhw)
    files = sorted(glob.glob(os.path.join(a.data, "sst_*_*.nc")),
                   key=lambda f: tuple(int(x) for x in re.findall(r"(\d+)_(\d+)\.nc$", f)[0]))
    t, fields = [], []
    for f in files:
        y, d = (int(x) for x in re.findall(r"(\d+)_(\d+)\.nc$", f)[0])
        t.append(date(y, 1, 1).toordinal() + d - 1)
        with netCDF4.Dataset(f) as ds:
            v = ds["analysed_sst"]
            v.set_auto_maskandscale(False)
            raw = v[:].astype(np.float64)
            fill = v.getncattr("_FillValue")
            lo, hi = v.getncattr("valid_min"), v.getncattr("valid_max")
            val = raw * np.float64(v.getncattr("scale_factor")) + np.float64(v.getncattr("add_offset"))
            val[(raw == fill) | (raw < lo) | (raw > hi)] = np.nan
            fields.append(val)
    t = np.array(t)
    temp = np.stack(fields)  # (T, lat, lon)
    ev = netCDF4.Dataset(os.path.join(a.events, "events_cold.nc" if a.cold else "events.nc"))
    li, lj = ev["lat_index"][:], ev["lon_index"][:]
    fields = ["duration", "intensity_max", "intensity_mean", "intensity_var", "intensity_cumulative",
              "intensity_max_relThresh", "intensity_max_abs", "rate_onset", "rate_decline"]
    got = {k: ev[k][:] for k in fields + ["index_start", "index_end", "category"]}
    y0, y1 = (int(x) for x in a.clim_years.split("-"))
    nlat, nlon = temp.shape[1:]
    cells = [(i, j) for i in range(nlat) for j in range(nlon) if np.isfinite(temp[:, i, j]).sum() > 0.5 * len(t)]
    rng = np.random.default_rng(1)
    # the cells with events first, then others
    with_events = sorted({(int(i), int(j)) for i, j in zip(li, lj)})
    pick = with_events[: a.cells // 2] + [cells[k] for k in rng.choice(len(cells), a.cells // 2, replace=False)]
    same, worst, n_events = 0, 0.0, 0
    for (i, j) in pick:
        m, _ = mhw.detect(t, temp[:, i, j].copy(), climatologyPeriod=[y0, y1], coldSpells=a.cold)
        sel = np.where((li == i) & (lj == j))[0]
        ok = len(sel) == m["n_events"]
        if ok:
            for k, e in enumerate(sel):
                ok &= got["index_start"][e] == m["index_start"][k] and got["index_end"][e] == m["index_end"][k]
                cat = {"Moderate": 1, "Strong": 2, "Severe": 3, "Extreme": 4}[str(m["category"][k])]
                ok &= got["category"][e] == cat
                for f in fields:
                    x, y = float(got[f][e]), float(m[f][k])
                    if not (np.isnan(x) and np.isnan(y)):
                        worst = max(worst, abs(x - y))
        same += ok
        n_events += m["n_events"]
        if not ok:
            print(f"cell {i},{j}: sstclim {len(sel)} events, marineHeatWaves {m['n_events']}")
    print(f"{same} of {len(pick)} cells agree on every event ({n_events} events); largest difference of a field {worst:.3g}")


if __name__ == "__main__":
    main()
