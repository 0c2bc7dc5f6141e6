#!/usr/bin/env python3
"""numpy peer of `sstclim run` (CPU peers benchmark, scripts/bench/cpu-peers.sh).

A straightforward vectorised implementation of sstclim's definition for files named
sst_{year}_{doy}.nc (ordinal calendar): for each target day D the samples are days D-h..D+h of
every year; mean = np.nanmean, P90 = np.nanpercentile(method='hazen') (Hyndman-Fan type 5).
All files are read into one [year, day, lat, lon] float64 array first.

Usage: peers_numpy.py DATA_DIR OUT_DIR [--years 1991-2020] [--doys 152-243] [--half-window 5]
Writes OUT_DIR/{mean,p90,count}.npy with shape (target days, lat, lon) and OUT_DIR/timing.json.
"""
import argparse
import json
import os
import time
import warnings

import netCDF4
import numpy as np


def span(text):
    a, b = text.split("-")
    return int(a), int(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--years", default="1991-2020")
    ap.add_argument("--doys", default="152-243")
    ap.add_argument("--half-window", type=int, default=5)
    ap.add_argument("--percentile", type=float, default=90.0)
    args = ap.parse_args()
    y0, y1 = span(args.years)
    d0, d1 = span(args.doys)
    h = args.half_window
    first, last = d0 - h, d1 + h  # the days the windows need
    years = range(y0, y1 + 1)
    days = range(first, last + 1)
    t0 = time.perf_counter()
    arr = None
    for iy, y in enumerate(years):
        for idd, d in enumerate(days):
            with netCDF4.Dataset(os.path.join(args.data, f"sst_{y}_{d:03d}.nc")) as nc:
                v = nc.variables["sst"]
                v.set_auto_mask(False)  # _FillValue is NaN: raw values keep NaN for missing
                x = np.asarray(v[...], dtype=np.float64).reshape(v.shape[-2:])
            if arr is None:
                arr = np.empty((len(years), len(days)) + x.shape, dtype=np.float64)
            arr[iy, idd] = x
    t1 = time.perf_counter()
    ny, nd, nlat, nlon = arr.shape
    targets = list(range(d0, d1 + 1))
    mean = np.empty((len(targets), nlat, nlon))
    pct = np.empty_like(mean)
    count = np.empty(mean.shape, dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells give NaN
        for i, D in enumerate(targets):
            lo = D - h - first
            w = arr[:, lo : lo + 2 * h + 1].reshape(ny * (2 * h + 1), nlat, nlon)
            mean[i] = np.nanmean(w, axis=0)
            pct[i] = np.nanpercentile(w, args.percentile, axis=0, method="hazen")
            count[i] = np.count_nonzero(~np.isnan(w), axis=0)
    t2 = time.perf_counter()
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "mean.npy"), mean)
    np.save(os.path.join(args.out, "p90.npy"), pct)
    np.save(os.path.join(args.out, "count.npy"), count)
    t3 = time.perf_counter()
    timing = {"read_s": t1 - t0, "compute_s": t2 - t1, "write_s": t3 - t2, "total_s": t3 - t0,
              "numpy": np.__version__, "netCDF4": netCDF4.__version__, "files": ny * nd}
    with open(os.path.join(args.out, "timing.json"), "w") as f:
        json.dump(timing, f, indent=1)
    print(json.dumps(timing))


if __name__ == "__main__":
    main()
