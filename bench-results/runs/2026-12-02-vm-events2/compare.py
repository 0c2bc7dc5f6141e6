"""Compare the events/summary files of two output directories variable by variable, bitwise
(NaN equal to NaN): `python compare.py DIR_A DIR_B [NAMES...]`; exit 1 on any difference."""
import sys

import netCDF4
import numpy as np

a, b = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or ["events.nc", "summary.nc", "events_cold.nc", "summary_cold.nc"]
bad = 0
for name in names:
    try:
        fa, fb = netCDF4.Dataset(f"{a}/{name}"), netCDF4.Dataset(f"{b}/{name}")
    except FileNotFoundError as e:
        print(f"{name}: skipped ({e})")
        continue
    for fx in (fa, fb):
        fx.set_auto_mask(False)
    if set(fa.variables) != set(fb.variables):
        print(f"{name}: variables differ")
        bad += 1
    for v in fa.variables:
        x, y = fa[v][:], fb[v][:]
        if x.dtype != y.dtype or x.shape != y.shape:
            print(f"{name} {v}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
            bad += 1
            continue
        if x.dtype.kind == "f":
            same = np.array_equal(x.view(f"u{x.dtype.itemsize}"), y.view(f"u{y.dtype.itemsize}"))
        else:
            same = np.array_equal(x, y)
        if not same:
            print(f"{name} {v}: values differ")
            bad += 1
        for att in fa[v].ncattrs():
            if str(fa[v].getncattr(att)) != str(fb[v].getncattr(att)):
                print(f"{name} {v}: attribute {att} differs")
                bad += 1
    print(f"{name}: {len(fa.variables)} variables, {fa.dimensions[list(fa.dimensions)[0]].size} along {list(fa.dimensions)[0]}")
print("EQUAL" if bad == 0 else f"{bad} DIFFERENCES")
sys.exit(1 if bad else 0)
