#!/usr/bin/env python3
"""How often would a search of the reference job leave a band of each group's top K rows?

The committed kernel writes every staged group's sorted keys (32 rows) to its ring in device
memory, and those writes reach DRAM: with the pool's reads they bound the staging at about
7.2 ms of the kernel's 11.75 ms (../kernel-lean-search-2026-12-01-h200/split/). A ring that
keeps only the top K valid rows of each group (the sentinels need no memory) writes K/32 of
that, but a search that needs a row below the band must rebuild it. This replays the reference
schedule (targets 152-243, half window 5, P90 type 5, float32 values) on the generated 360x181
dataset and counts, per (cell, target) and per (wave of 32 cells, target), the searches that
would read a stored row below the band. Rows a search reads in group j: from the group's
starting position (samples at or below the previous day's P90, or the top without one) to the
counts at or below x(r) and x(r + 1), plus one row above (the kernel's `at`/`above` rows).

A second rule places each group's band where the search will start in it: around the count at
or below the previous day's P90 when the group is staged (its starting position; the top for
the groups staged before the first target), M rows either side.

    simulate.py DATA_DIR [K ...]
"""
import sys

import netCDF4
import numpy as np

data_dir = sys.argv[1]
ks = [int(k) for k in sys.argv[2:]] or [6, 8, 10, 12, 16]
years, days = range(1991, 2021), range(147, 249)
with netCDF4.Dataset(f"{data_dir}/sst_1991_147.nc") as f:
    var = [k for k in f.variables if f.variables[k].ndim >= 2][0]
    shape = f.variables[var].shape[-2:]
cells = shape[0] * shape[1]
pool = np.empty((len(days), len(years), cells), dtype=np.float32)
for di, d in enumerate(days):
    for yi, y in enumerate(years):
        with netCDF4.Dataset(f"{data_dir}/sst_{y}_{d:03d}.nc") as f:
            a = np.ma.filled(f.variables[var][...].astype(np.float64), np.nan)
            pool[di, yi] = a.reshape(-1).astype(np.float32)
groups = np.sort(pool, axis=1)  # NaN last
valid = (~np.isnan(pool)).sum(axis=1)  # [day][cell]
half, p = 5, 0.9
n_targets = len(days) - 2 * half
ms = [3, 4, 5, 6, 8]
center = np.zeros((len(days), cells), dtype=int)  # each group's starting position when staged
center[:2 * half + 1] = valid[:2 * half + 1]
amiss_cells = {m: 0 for m in ms}
amiss_waves = {m: 0 for m in ms}
miss_cells = {k: 0 for k in ks}
miss_waves = {k: 0 for k in ks}
searches = 0
waves = (cells + 31) // 32
prev = None
for t in range(n_targets):
    win = groups[t:t + 2 * half + 1]  # [group][year][cell]
    n = valid[t:t + 2 * half + 1].sum(axis=0)
    allv = np.sort(win.reshape(-1, cells), axis=0)
    has = n > 0
    pos = p * n + 0.5  # Hyndman-Fan type 5
    lo = np.clip(np.floor(pos).astype(int), 1, np.maximum(n, 1))
    frac = np.where((pos > lo) & (lo < n), pos - lo, 0.0)
    idx = np.arange(cells)
    x_lo = allv[lo - 1, idx]
    x_hi = np.where(frac > 0, allv[np.minimum(lo, np.maximum(n, 1) - 1), idx], x_lo)
    lowest = np.full((2 * half + 1, cells), 10**6)
    top = np.zeros((2 * half + 1, cells), dtype=int)
    highest = np.zeros((2 * half + 1, cells), dtype=int)
    for j in range(2 * half + 1):
        g = win[j]
        nj = valid[t + j]
        b = (g <= x_lo).sum(axis=0)
        c = (g <= x_hi).sum(axis=0)
        a = (g <= prev).sum(axis=0) if prev is not None else nj  # no hint: from the top
        lowest[j] = np.minimum(np.minimum(a, b), c)
        highest[j] = np.maximum(np.maximum(a, b), c) + 1
        top[j] = nj
    searches += int(has.sum())
    for k in ks:
        # a stored row below the band: max(lowest, 1) < n_j - k + 1 (row 0 is the MIN sentinel)
        need = (np.maximum(lowest, 1) < top - k + 1) & (top > 0)
        m = need.any(axis=0) & has
        miss_cells[k] += int(m.sum())
        mw = np.zeros(waves * 32, dtype=bool)
        mw[:cells] = m
        miss_waves[k] += int(mw.reshape(waves, 32).any(axis=1).sum())
    for m in ms:
        c0 = center[t:t + 2 * half + 1]
        lo_band = np.maximum(c0 - m, 1)
        hi_band = np.minimum(c0 + m, top)
        hi_r = np.minimum(np.maximum(highest, 0), top)
        low_r = np.maximum(lowest, 1)
        need = (top > 0) & (low_r <= hi_r) & ((low_r < lo_band) | (hi_r > hi_band))
        am = need.any(axis=0) & has
        amiss_cells[m] += int(am.sum())
        mw = np.zeros(waves * 32, dtype=bool)
        mw[:cells] = am
        amiss_waves[m] += int(mw.reshape(waves, 32).any(axis=1).sum())
    if t + 2 * half + 1 < len(days):
        g = groups[t + 2 * half + 1]
        center[t + 2 * half + 1] = (g <= x_lo).sum(axis=0)  # staged for target t + 1, hint x_lo
    prev = x_lo
wave_searches = waves * n_targets
rows_full = 32 * valid.size
print(f"{cells} cells ({int((valid.sum(axis=0) > 0).sum())} with data), {n_targets} targets, {searches} searches")
print("| K | rows written / full ring | searches leaving the band | waves with one (per target) |")
print("|---|---|---|---|")
for k in ks:
    stored = np.minimum(valid, k).sum()
    print(f"| {k} | {stored / rows_full:.3f} | {miss_cells[k] / searches:.5f} | {miss_waves[k] / wave_searches:.4f} |")
print()
print("| M (band: starting position +- M) | rows written / full ring | searches leaving the band | waves with one (per target) |")
print("|---|---|---|---|")
for m in ms:
    stored = np.minimum(valid, 2 * m + 1).sum()
    print(f"| {m} | {stored / rows_full:.3f} (at most) | {amiss_cells[m] / searches:.5f} | {amiss_waves[m] / wave_searches:.4f} |")
