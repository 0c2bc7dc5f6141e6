#!/usr/bin/env python3
"""Write a climatology.nc in the `--layout climatology` format (see /work/wt/COMMON.md and
src/input/climatology.rs) from the stacked outputs of today's `sstclim run --layout stacked
--calendar hobday366` (mean.nc, p10.nc, p90.nc), until `run --layout climatology` exists.
Used to give `sstclim events` a climatology for benchmarks; it does not smooth or interpolate
(the values are whatever the run computed).

    python3 scripts/events/stacked_to_climatology.py RUN_DIR OUT.nc --var analysed_sst --years 1983-2012
"""
import argparse

import netCDF4
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("out")
    ap.add_argument("--var", default="analysed_sst")
    ap.add_argument("--years", default="1983-2012")
    a = ap.parse_args()
    src = {s: netCDF4.Dataset(f"{a.run_dir}/{s}.nc") for s in ("mean", "p10", "p90")}
    m = src["mean"]
    doy = m.variables["doy"][:]
    assert len(doy) == 366 and doy[0] == 1, "need all 366 days of year"
    out = netCDF4.Dataset(a.out, "w")
    lat, lon = m.variables["lat"][:], m.variables["lon"][:]
    out.createDimension("doy", 366)
    out.createDimension("nv", 2)
    out.createDimension("lat", len(lat))
    out.createDimension("lon", len(lon))
    out.setncatts({
        "Conventions": "CF-1.8",
        "sstclim_layout": "climatology",
        "input_variable": a.var,
        "climatology_years": a.years,
        "calendar_mode": "hobday366",
        "window_half_width": np.int32(5),
        "window_edges": "clip",
        "feb29": "window",
        "smoothing_width": np.int32(1),
        "percentile_method": "7",
        "percentiles": np.array([10.0, 90.0]),
        "min_samples": np.int32(1),
    })
    out.createVariable("doy", "i4", ("doy",))[:] = doy
    t = out.createVariable("time", "f8", ("doy",))
    t.setncatts({k: m.variables["time"].getncattr(k) for k in m.variables["time"].ncattrs()})
    t[:] = m.variables["time"][:]
    out.createVariable("climatology_bounds", "f8", ("doy", "nv"))[:] = m.variables["climatology_bounds"][:]
    for name, vals, units in (("lat", lat, "degrees_north"), ("lon", lon, "degrees_east")):
        v = out.createVariable(name, "f8", (name,))
        v.units = units
        v[:] = vals
    for s, ds in src.items():
        v = out.createVariable(f"{a.var}_{s}", "f4", ("doy", "lat", "lon"), fill_value=np.float32(np.nan))
        v[:] = ds.variables[s][:].filled(np.nan).astype("f4")
    out.close()


if __name__ == "__main__":
    main()
