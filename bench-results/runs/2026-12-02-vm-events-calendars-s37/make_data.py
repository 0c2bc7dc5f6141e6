"""Two datasets of the same grid and years that differ only in calendar, for the VM
measurement of `sstclim events` on a model calendar (README.md beside this file).

One file a year (CMIP6-like): tos(time, lat, lon) float32, contiguous, time in
"days since 1850-01-01" at noon; `gregorian` (365 days in 2001-2003) and `360_day` (360).
Values: a seasonal cycle by latitude plus AR(1)-like noise, the same generator for both.
Usage: make_data.py OUTDIR [NLON NLAT FIRST LAST]
"""
import os
import sys

import netCDF4
import numpy as np

out = sys.argv[1]
nlon, nlat = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (360, 181)
first, last = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (2001, 2003)
lat = np.linspace(-90, 90, nlat)
lon = np.arange(nlon) * (360.0 / nlon)
for cal, year_len in [("gregorian", None), ("360_day", 360)]:
    d = os.path.join(out, cal)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(7)
    anom = np.zeros((nlat, nlon), np.float32)
    for year in range(first, last + 1):
        n = year_len or (366 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 365)
        if year_len:
            base = (year - 1850) * 360
        else:
            base = (np.datetime64(f"{year}-01-01") - np.datetime64("1850-01-01")).astype(int)
        f = netCDF4.Dataset(os.path.join(d, f"tos_day_{year}.nc"), "w")
        f.createDimension("time", n)
        f.createDimension("lat", nlat)
        f.createDimension("lon", nlon)
        t = f.createVariable("time", "f8", ("time",))
        t.standard_name, t.units, t.calendar = "time", "days since 1850-01-01", cal
        t[:] = base + np.arange(n) + 0.5
        for name, vals, units in [("lat", lat, "degrees_north"), ("lon", lon, "degrees_east")]:
            v = f.createVariable(name, "f8", (name,))
            v.units = units
            v[:] = vals
        v = f.createVariable("tos", "f4", ("time", "lat", "lon"), fill_value=np.float32(1e20))
        v.units = "degC"
        season = 15 + 10 * np.cos(np.deg2rad(lat))[:, None]
        for i in range(n):
            anom = 0.9 * anom + 0.44 * rng.standard_normal((nlat, nlon), dtype=np.float32)
            v[i] = season + 3 * np.sin(2 * np.pi * i / n) + anom
        f.close()
