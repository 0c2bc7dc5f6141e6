"""Yearly time-series copies of a daily `sstclim generate --time-dim` dataset: the same values,
one file per year with `time` holding every day (PSL's sst.day.mean.YYYY.nc layout), int16
packed, deflate 4 + shuffle, chunks (CT, CY, CX) given on the command line.

usage: make_yearly.py DAILY_DIR OUT_DIR CT CY CX
"""
import glob
import os
import sys

import netCDF4
import numpy as np

src, out, ct, cy, cx = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
os.makedirs(out, exist_ok=True)
files = sorted(glob.glob(os.path.join(src, "sst_*_*.nc")))
by_year = {}
for f in files:
    year = int(os.path.basename(f).split("_")[1])
    by_year.setdefault(year, []).append(f)
for year, fs in sorted(by_year.items()):
    fs.sort(key=lambda f: int(os.path.basename(f).split("_")[2].split(".")[0]))
    with netCDF4.Dataset(fs[0]) as d0:
        nlat, nlon = len(d0.dimensions["lat"]), len(d0.dimensions["lon"])
        lat, lon = d0["lat"][:], d0["lon"][:]
        attrs = {k: d0["analysed_sst"].getncattr(k) for k in d0["analysed_sst"].ncattrs() if k != "_FillValue"}
        tunits = d0["time"].units
    path = os.path.join(out, f"sst.day.mean.{year}.nc")
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("time", None)
        d.createDimension("lat", nlat)
        d.createDimension("lon", nlon)
        t = d.createVariable("time", "i4", ("time",))
        t.units, t.standard_name, t.calendar, t.axis = tunits, "time", "standard", "T"
        for name, vals, std, units in (("lat", lat, "latitude", "degrees_north"), ("lon", lon, "longitude", "degrees_east")):
            v = d.createVariable(name, "f4", (name,))
            v.standard_name, v.units = std, units
            v[:] = vals
        v = d.createVariable(
            "analysed_sst", "i2", ("time", "lat", "lon"), zlib=True, complevel=4, shuffle=True,
            chunksizes=(min(ct, len(fs)), min(cy, nlat), min(cx, nlon)), fill_value=np.int16(-32768),
        )
        v.set_auto_maskandscale(False)
        for k, val in attrs.items():
            v.setncattr(k, val)
        times = np.zeros(len(fs), "i4")
        block = np.zeros((len(fs), nlat, nlon), "i2")
        for i, f in enumerate(fs):
            with netCDF4.Dataset(f) as s:
                s.set_auto_maskandscale(False)
                times[i] = s["time"][0]
                block[i] = s["analysed_sst"][0]
        t[:] = times
        v[:] = block
    print(path, len(fs))
