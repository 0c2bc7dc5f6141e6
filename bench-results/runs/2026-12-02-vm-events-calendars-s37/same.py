"""Every variable (bits) and attribute of two directories' events.nc and summary.nc equal,
global `history` aside (it holds the time and command). Usage: same.py DIR_A DIR_B"""
import sys

import netCDF4
import numpy as np

a, b = sys.argv[1:3]
for name in ["events.nc", "summary.nc"]:
    fa, fb = netCDF4.Dataset(f"{a}/{name}"), netCDF4.Dataset(f"{b}/{name}")
    ga = {k: fa.getncattr(k) for k in fa.ncattrs() if k != "history"}
    gb = {k: fb.getncattr(k) for k in fb.ncattrs() if k != "history"}
    assert ga.keys() == gb.keys() and all(str(ga[k]) == str(gb[k]) for k in ga), name
    assert list(fa.variables) == list(fb.variables), name
    for v in fa.variables:
        va, vb = fa.variables[v], fb.variables[v]
        va.set_auto_maskandscale(False), vb.set_auto_maskandscale(False)
        assert {k: str(va.getncattr(k)) for k in va.ncattrs()} == {k: str(vb.getncattr(k)) for k in vb.ncattrs()}, v
        x, y = np.asarray(va[:]), np.asarray(vb[:])
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), f"{name} {v}"
    print(f"{name}: {len(fa.variables)} variables, bitwise equal")
