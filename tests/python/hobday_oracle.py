#!/usr/bin/env python3
"""marineHeatWaves' climatology, written out with numpy, on a series tests/it/run/hobday_numpy.rs
writes as NetCDF files from the same integer formula: the expected values of
tests/fixtures/hobday_numpy.json.

The rules are those of marineHeatWaves.detect() (github.com/ecjoliver/marineHeatWaves, the
climatology part) and its runavg(), transcribed: day of year with Feb 29 = 60 and Mar 1 = 61 in
every year; the window of day d is the indices tt0 + w (w = -h..h) of every date of day d in the
climatology years, into the whole series (clipped to the series only: sstclim's
--window-edges extend); np.nanpercentile / np.nanmean over it; day 60 skipped, then
0.5 * day 59 + 0.5 * day 61; runavg: np.convolve of the three-fold periodic series with
np.ones(w) / w, mode 'same', the middle third. The 10th percentile is asked of
np.nanpercentile directly (marineHeatWaves' coldSpells negates the series and takes the 90th).

    python3 tests/python/hobday_oracle.py > tests/fixtures/hobday_numpy.json
"""
import datetime
import json
import sys

import numpy as np

FIRST, LAST = 1982, 1985  # the series (files); climatology years below
CLIM = (1983, 1984)
HALF = 5
CELLS = 3


def value(t, c):
    """Cell c on day t (days since FIRST-01-01): an integer over 100, or NaN (a gap). Shared
    with tests/it/run/hobday_numpy.rs, which must compute the same bits."""
    if c == 1 or (c == 0 and (t * 31 + 17) % 13 == 0) or (c == 2 and (t * 7 + 3) % 5 != 0):
        return float("nan")
    o = t % 365
    season = abs((o * 2) % 366 - 183)
    return (1500 + 8 * season + (t * 7919 + c * 104729) % 613) / 100


def runavg(ts, w):
    """marineHeatWaves.runavg, verbatim."""
    N = len(ts)
    ts = np.append(ts, np.append(ts, ts))
    ts_smooth = np.convolve(ts, np.ones(w) / w, mode="same")
    return ts_smooth[N : 2 * N]


def climatology(temp, year, doy, pctile, smooth_width):
    """The climatology part of marineHeatWaves.detect (alternateClimatology off, Ly off)."""
    T = len(temp)
    clim_start = np.where(year == CLIM[0])[0][0]
    clim_end = np.where(year == CLIM[1])[0][-1]
    thresh = np.nan * np.zeros(366)
    seas = np.nan * np.zeros(366)
    for d in range(1, 367):
        if d == 60:
            continue
        tt0 = np.where(doy[clim_start : clim_end + 1] == d)[0]
        if len(tt0) == 0:
            continue
        tt = np.array([])
        for w in range(-HALF, HALF + 1):
            tt = np.append(tt, clim_start + tt0 + w)
        tt = tt[tt >= 0]
        tt = tt[tt < T]
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                thresh[d - 1] = np.nanpercentile(temp[tt.astype(int)], pctile)
                seas[d - 1] = np.nanmean(temp[tt.astype(int)])
    thresh[59] = 0.5 * thresh[58] + 0.5 * thresh[60]
    seas[59] = 0.5 * seas[58] + 0.5 * seas[60]
    if smooth_width > 1:
        thresh = runavg(thresh, smooth_width)
        seas = runavg(seas, smooth_width)
    return seas, thresh


def main():
    start = datetime.date(FIRST, 1, 1)
    days = (datetime.date(LAST, 12, 31) - start).days + 1
    dates = [start + datetime.timedelta(t) for t in range(days)]
    year = np.array([d.year for d in dates])
    leap = lambda y: (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
    doy = np.array(
        [o if leap(d.year) or o < 60 else o + 1 for d in dates for o in [d.timetuple().tm_yday]]
    )
    out = {"generator": "tests/python/hobday_oracle.py", "numpy": np.__version__, "runs": {}}
    for width in (1, 31):
        stats = {"mean": [], "p10": [], "p90": []}
        for c in range(CELLS):
            temp = np.array([value(t, c) for t in range(days)])
            seas, p90 = climatology(temp, year, doy, 90, width)
            _, p10 = climatology(temp, year, doy, 10, width)
            for name, v in (("mean", seas), ("p10", p10), ("p90", p90)):
                stats[name].append([None if np.isnan(x) else float(x) for x in v])
        out["runs"][f"smooth{width}"] = stats
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
