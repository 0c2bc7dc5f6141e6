#!/usr/bin/env python3
"""xclim peer of `sstclim run` (CPU peers benchmark, scripts/bench/cpu-peers.sh).

Opens the per-day files sst_{year}_{doy}.nc with xarray.open_mfdataset (dask), puts them on a
`noleap` time axis whose day of year is the file's ordinal day (so the target days are the same
as sstclim's `ordinal` calendar), and computes
  P90  = xclim.core.calendar.percentile_doy(sst, window=11, per=90, alpha=0.5, beta=0.5)
  mean = sum / count of the same rolling 11-step windows, grouped by day of year (xarray;
         xclim has no day-of-year window mean)
in one dask computation. percentile_doy's window is 11 consecutive *time steps*, centred: the
series holds only days 147..248 of each year, so windows centred on days 152..243 lie inside one
year and are the same samples as sstclim's, while windows centred on 147..151 / 244..248 mix
two years (those days are not compared).

Usage: peers_xclim.py DATA_DIR OUT_DIR [--doys 152-243] [--lat-chunk 10]
Writes OUT_DIR/{mean,p90}.npy (target days, lat, lon) and OUT_DIR/timing.json.
"""
import argparse
import glob
import json
import os
import re
import time
import warnings

import cftime
import dask
import numpy as np
import xarray as xr
import xclim
from xclim.core.calendar import percentile_doy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--doys", default="152-243")
    ap.add_argument("--half-window", type=int, default=5)
    ap.add_argument("--lat-chunk", type=int, default=10)
    args = ap.parse_args()
    d0, d1 = (int(x) for x in args.doys.split("-"))
    window = 2 * args.half_window + 1
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    files = sorted(glob.glob(os.path.join(args.data, "sst_*_*.nc")))
    ds = xr.open_mfdataset(files, combine="nested", concat_dim="time", decode_times=False,
                           data_vars="minimal", coords="minimal", compat="override",
                           join="override", parallel=False)
    dates = []
    for f in files:
        y, d = map(int, re.search(r"sst_(\d{4})_(\d{3})\.nc$", f).groups())
        dates.append(cftime.DatetimeNoLeap(y, 1, 1) + np.timedelta64(d - 1, "D").item())
    sst = ds["sst"].assign_coords(time=xr.CFTimeIndex(dates))
    sst = sst.chunk({"time": -1, "lat": args.lat_chunk, "lon": -1})
    t1 = time.perf_counter()
    p = percentile_doy(sst, window=window, per=90, alpha=0.5, beta=0.5).sel(percentiles=90)
    rr = sst.rolling(time=window, center=True, min_periods=1).construct("window")
    s = rr.sum("window", skipna=True).groupby("time.dayofyear").sum()
    n = rr.count("window").groupby("time.dayofyear").sum()
    mean = (s / n).where(n > 0)
    sel = dict(dayofyear=slice(d0, d1))
    p = p.sel(**sel).transpose("dayofyear", "lat", "lon")
    mean = mean.sel(**sel).transpose("dayofyear", "lat", "lon")
    pv, mv = dask.compute(p.data, mean.data)
    t2 = time.perf_counter()
    doys = p.dayofyear.values
    assert list(doys) == list(range(d0, d1 + 1)), doys
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "p90.npy"), np.asarray(pv, dtype=np.float64))
    np.save(os.path.join(args.out, "mean.npy"), np.asarray(mv, dtype=np.float64))
    t3 = time.perf_counter()
    timing = {"open_s": t1 - t0, "compute_s": t2 - t1, "write_s": t3 - t2, "total_s": t3 - t0,
              "xclim": xclim.__version__, "xarray": xr.__version__, "dask": dask.__version__,
              "numpy": np.__version__, "lat_chunk": args.lat_chunk,
              "scheduler": "dask threaded (default), %d workers" % os.cpu_count(),
              "files": len(files)}
    with open(os.path.join(args.out, "timing.json"), "w") as f:
        json.dump(timing, f, indent=1)
    print(json.dumps(timing))


if __name__ == "__main__":
    main()
