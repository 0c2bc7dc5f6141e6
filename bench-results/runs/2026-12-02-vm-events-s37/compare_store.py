"""Compare the outputs of `sstclim events` written with --output-type f32 and/or --deflate
(DIR_B) with the default ones (DIR_A), read back through netCDF4-python (libnetcdf):
every variable and attribute; values bitwise equal (NaN equal to NaN) where the stored type is
the same, and equal to the float64 value rounded to float32 where DIR_B stores float32.
Prints each file's storage (chunks, filters) and size.
Usage: python compare_store.py DIR_A DIR_B [NAMES...]; exit 1 on any difference."""
import os
import sys

import netCDF4
import numpy as np

a, b = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or ["events.nc", "summary.nc", "events_cold.nc", "summary_cold.nc"]
bad = 0


def bits(x):
    return x.view(f"u{x.dtype.itemsize}")


for name in names:
    fa, fb = netCDF4.Dataset(f"{a}/{name}"), netCDF4.Dataset(f"{b}/{name}")
    for fx in (fa, fb):
        fx.set_auto_mask(False)
    if set(fa.variables) != set(fb.variables) or fa.ncattrs() != fb.ncattrs():
        print(f"{name}: variables or global attributes differ")
        bad += 1
    rounded, stored = [], set()
    for v in fa.variables:
        x, y = fa[v][:], fb[v][:]
        if x.shape != y.shape:
            print(f"{name} {v}: shape {x.shape} vs {y.shape}")
            bad += 1
            continue
        if x.dtype == np.float64 and y.dtype == np.float32:
            want = x.astype(np.float32)
            rounded.append(v)
        elif x.dtype == y.dtype:
            want = x
        else:
            print(f"{name} {v}: {x.dtype} vs {y.dtype}")
            bad += 1
            continue
        if want.dtype.kind == "f":
            nan = np.isnan(want)
            same = np.array_equal(nan, np.isnan(y)) and np.array_equal(bits(want[~nan]), bits(y[~nan]))
        else:
            same = np.array_equal(want, y)
        if not same:
            print(f"{name} {v}: values differ")
            bad += 1
        if set(fa[v].ncattrs()) - {"_FillValue"} != set(fb[v].ncattrs()) - {"_FillValue"}:
            print(f"{name} {v}: attributes {fa[v].ncattrs()} vs {fb[v].ncattrs()}")
            bad += 1
        for att in fa[v].ncattrs():
            va, vb = fa[v].getncattr(att), (fb[v].getncattr(att) if att in fb[v].ncattrs() else None)
            same = np.array_equal(np.asarray(va), np.asarray(vb), equal_nan=np.asarray(va).dtype.kind == "f")
            if not same and att != "_FillValue":
                print(f"{name} {v}: attribute {att} {va!r} vs {vb!r}")
                bad += 1
        f = fb[v].filters() or {}
        stored.add(f"chunks {fb[v].chunking()} deflate {f.get('complevel', 0) if f.get('zlib') else 0} shuffle {bool(f.get('shuffle'))}" if fb[v].ndim == 3 else "")
    dim = list(fa.dimensions)[0]
    print(f"{name}: {len(fa.variables)} variables, {fa.dimensions[dim].size} along {dim}; "
          f"{os.path.getsize(f'{a}/{name}') / 1e6:.1f} MB -> {os.path.getsize(f'{b}/{name}') / 1e6:.1f} MB; "
          f"float32 of float64: {len(rounded)} variables; {'; '.join(sorted(s for s in stored if s))}")
print("EQUAL" if bad == 0 else f"{bad} DIFFERENCES")
sys.exit(1 if bad else 0)
