#!/usr/bin/env python3
"""What a user's tools make of sstclim's outputs, on every layout (run by scripts/test.sh).

Usage: cf_outputs.py SSTCLIM_BINARY [WORK_DIR]

On a small generated OSTIA-like dataset (128x64, so that compressed chunks hold random-looking
byte planes stored as such; int16 kelvin, `analysed_sst`), the same job under the
hobday366 calendar with --units degC is written in every layout: per-doy, stacked, stacked
through MPI (2 ranks, where mpirun exists), and `climatology` (where the binary has it); and
stored every way: float64, float64 deflated, float32 deflated, int16 packed, int16 deflated.

1. The IOOS compliance checker (cf:1.8) reports nothing (no error, warning or suggestion) for
   every file of every run.
2. Read back through netCDF4-python, every stored form equals the float64 outputs: exactly
   (float64, compressed or not, any layout), to float32 rounding (float32: the nearest float32
   of the float64 value), within scale/2 (int16); missing cells agree.
   The same holds of curvilinear inputs (CMIP6 `(time, j, i)` with 2-D latitude/longitude, and a
   rotated-pole grid with its grid mapping), whose outputs keep the input's dimensions, 2-D
   coordinates (which cf_xarray finds) and grid mapping.
3. xarray + cf_xarray: every layout opens (with decode_coords="all", which follows CF's
   `climatology` attribute; per-doy files with open_mfdataset, which needs an increasing time
   axis), time and climatology_bounds decode to dates (the same calendar),
   the bounds are found through time's `climatology` attribute and enclose each time (cf_xarray's
   get_bounds follows `bounds` only, which CF 7.4 forbids on a climatological axis; cf_xarray
   finds the T axis and the standard name), `doy` is a coordinate, a time slice across Feb 29 selects days
   59-61, and the variables are named {input}_{stat} with units, standard_name, cell_methods.

Exits non-zero with the failures listed.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import cf_xarray  # noqa: F401  (registers the .cf accessor)
import netCDF4
import numpy as np
import xarray as xr

BIN = os.path.abspath(sys.argv[1])
WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="sstclim-cf-")
YEARS, DOYS = "2003-2005", "55-70"
JOB = ["--baseline", YEARS, "--doys", DOYS, "--half-window", "3", "--percentile", "10,90",
       "--calendar", "hobday366", "--units", "degC", "--threads", "2", "--overwrite"]
SCALE = 0.01
FORMS = {
    "f64": [],
    "f64-deflate": ["--deflate", "4"],
    "f32-deflate": ["--output-type", "f32", "--deflate", "1"],
    "i16": ["--output-type", "i16", "--output-scale", str(SCALE)],
    "i16-deflate": ["--output-type", "i16", "--output-scale", str(SCALE), "--deflate", "1", "--shuffle", "false"],
}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def sh(args, **kw):
    env = dict(os.environ, SSTCLIM_RATES="none", HDF5_USE_FILE_LOCKING="FALSE",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    r = subprocess.run(args, capture_output=True, text=True, env=env, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def run(name, layout, extra, mpi=0):
    out = os.path.join(WORK, name)
    args = [BIN, "-q", "run", "--input", os.path.join(WORK, "data"), "--output", out,
            "--layout", layout] + JOB + extra
    if mpi:
        args = ["mpirun", "--oversubscribe", "-np", str(mpi)] + args
    sh(args)
    return out


def stat_var(ds):
    names = [v for v in ds.variables if v.endswith(("_mean", "_p10", "_p90"))]
    assert len(names) >= 1, list(ds.variables)
    return names


def values(path):
    """{variable: float64 array with NaN where missing} of a file, through netCDF4-python; the
    filters the file declares are the ones its run asked for (what `ncdump -hs` shows)."""
    run = os.path.basename(os.path.dirname(path))
    with netCDF4.Dataset(path) as ds:
        out = {}
        for v in stat_var(ds):
            f = ds[v].filters() or {}
            want_zlib = "deflate" in run
            if bool(f.get("zlib")) != want_zlib or bool(f.get("shuffle")) != (want_zlib and "i16-deflate" not in run):
                fail(f"{run}/{os.path.basename(path)}: {v} filters {f}")
            a = ds[v][:]
            out[v] = np.ma.filled(a.astype(np.float64), np.nan)
        return out


def stacked_values(d):
    """{variable: (time, lat, lon)} of a run, whatever its layout."""
    files = sorted(glob.glob(os.path.join(d, "*.nc")))
    acc = {}
    for f in files:
        for v, a in values(f).items():
            acc.setdefault(v, []).append(a)
    return {v: np.concatenate(a, axis=0) if a[0].ndim == 3 else a[0] for v, a in acc.items()}


def compare(name, got, ref, kind):
    for v, r in ref.items():
        if v not in got:
            fail(f"{name}: no variable {v}")
            continue
        g = got[v]
        if g.shape != r.shape:
            fail(f"{name}: {v} shape {g.shape} vs {r.shape}")
            continue
        if not np.array_equal(np.isnan(g), np.isnan(r)):
            fail(f"{name}: {v}: missing cells differ")
            continue
        ok = ~np.isnan(r)
        if kind == "exact":
            good = np.array_equal(g[ok].view(np.uint64), r[ok].view(np.uint64))
        elif kind == "f32":
            good = np.array_equal(g[ok].astype(np.float32), r[ok].astype(np.float32))
        else:
            good = np.max(np.abs(g[ok] - r[ok]), initial=0) <= SCALE / 2 * (1 + 1e-9)
        if not good:
            err = np.max(np.abs(g[ok] - r[ok]), initial=0)
            fail(f"{name}: {v} differs from float64 ({kind}; max error {err})")


def checker(files):
    report = os.path.join(WORK, "checker.json")
    cmd = [os.path.join(os.path.dirname(sys.executable), "compliance-checker"), "--test", "cf:1.8",
           "-f", "json_new", "-o", report] + files
    subprocess.run(cmd, capture_output=True, text=True)
    with open(report) as f:
        data = json.load(f)
    for path, tests in data.items():
        r = tests["cf:1.8"]
        for prio in ("high_priorities", "medium_priorities", "low_priorities"):
            for check in r[prio]:
                # CMIP6's index dimensions j, i have no CF axis: the checker calls them unknown
                # (U) and wants unknown dimensions left of a time dimension that is not
                # unlimited (the inputs' unlimited time passes); CF 2.4 orders only T, Z, Y, X
                check["msgs"] = [m for m in check["msgs"] if not (
                    "curvilinear-cmip6" in path and "recommended order T, Z, Y, X" in m and "j (U), i (U)" in m)]
                if check["msgs"]:
                    fail(f"compliance checker, {os.path.relpath(path, WORK)}: {check['name']}: {check['msgs']}")


def xarray_round_trip(name, d, var, units="degree_Celsius"):
    files = sorted(glob.glob(os.path.join(d, "*.nc")))
    groups = {}
    for f in files:
        groups.setdefault(os.path.basename(f).split("_doy")[0].split(".")[0], []).append(f)
    for stat, fs in groups.items():
        try:
            if len(fs) > 1:
                ds = xr.open_mfdataset(fs, combine="by_coords", data_vars="minimal", coords="minimal", decode_coords="all",
                                       compat="override")
            else:
                ds = xr.open_dataset(fs[0], decode_coords="all")
        except Exception as e:  # noqa: BLE001
            fail(f"{name}/{stat}: xarray cannot open: {e}")
            continue
        with ds:
            if "time" not in ds.dims and "doy" in ds.dims:
                # the climatology layout: days along doy, time a coordinate of it
                ds = ds.swap_dims({"doy": "time"})
            want = f"{var}_{stat}"
            stats = [v for v in ds.data_vars if v.endswith(("_mean", "_p10", "_p90"))]
            if stat in ("mean", "p10", "p90") and stats != [want]:
                fail(f"{name}/{stat}: data variables {stats}, expected [{want}]")
            if "mean" in ds.data_vars:
                fail(f"{name}/{stat}: a variable named 'mean' collides with Dataset.mean")
            if not np.issubdtype(ds["time"].dtype, np.datetime64):
                fail(f"{name}/{stat}: time decodes to {ds['time'].dtype}")
            b = ds.get("climatology_bounds")
            if b is None or not np.issubdtype(b.dtype, np.datetime64):
                fail(f"{name}/{stat}: climatology_bounds not decoded to dates ({None if b is None else b.dtype})")
            if not ds.indexes["time"].is_monotonic_increasing:
                fail(f"{name}/{stat}: time is not increasing: {ds['time'].values}")
            if "doy" not in ds.coords:
                fail(f"{name}/{stat}: doy is not a coordinate")
            # the bounds of a climatological axis: named by `climatology` (CF 7.4 forbids a
            # `bounds` attribute there, the one cf_xarray's get_bounds follows), which xarray
            # keeps in the encoding and makes a coordinate
            bname = ds["time"].encoding.get("climatology")
            if bname != "climatology_bounds" or bname not in ds.coords:
                fail(f"{name}/{stat}: time's climatology names {bname}; coordinates {list(ds.coords)}")
            elif not bool(((ds[bname][:, 0] <= ds["time"]) & (ds["time"] < ds[bname][:, 1])).all()):
                fail(f"{name}/{stat}: a time lies outside its climatology bounds")
            try:
                if ds.cf["T"].name != "time":
                    fail(f"{name}/{stat}: cf_xarray's T axis is {ds.cf['T'].name}")
                sn = "sea_surface_foundation_temperature"
                if stat in ("mean", "p10", "p90") and ds.cf[sn].name != want:
                    fail(f"{name}/{stat}: cf_xarray's {sn} is {ds.cf[sn].name}")
            except Exception as e:  # noqa: BLE001
                fail(f"{name}/{stat}: cf_xarray: {e}")
            leap = ds["time"].dt.year.values[0]
            sel = ds.sel(time=slice(f"{leap}-02-28", f"{leap}-03-01"))
            if list(sel["doy"].values) != [59, 60, 61]:
                fail(f"{name}/{stat}: time slice Feb 28 - Mar 1 gives days {list(sel['doy'].values)}")
            if want in ds:
                a = ds[want].attrs
                if a.get("units") != units or "standard_name" not in a or "cell_methods" not in a:
                    fail(f"{name}/{stat}: {want} attributes {a}")
                float(ds[want].sel(time=f"{leap}-02-29").mean())


def curvilinear_data(root):
    """Two small curvilinear datasets, one file per day: CMIP6's `tos(time, j, i)` with int
    `j`/`i`, 2-D `latitude`/`longitude` (with vertices) named by `coordinates`, and a
    rotated-pole `tos(time, rlat, rlon)` with 2-D `lat`/`lon` and its `rotated_pole` grid
    mapping."""
    nj, ni = 12, 16
    jj, ii = np.meshgrid(np.arange(nj), np.arange(ni), indexing="ij")
    lat2 = -40.0 + 6.0 * jj + 0.4 * ii
    lon2 = 120.0 + 5.0 * ii - 0.8 * jj
    rng = np.random.default_rng(7)
    dirs = {}
    for kind, (row, col) in {"cmip6": ("j", "i"), "rotated": ("rlat", "rlon")}.items():
        d = os.path.join(root, f"data-{kind}")
        os.makedirs(d, exist_ok=True)
        dirs[kind] = d
        for year in range(2003, 2006):
            for doy in range(45, 81):
                with netCDF4.Dataset(os.path.join(d, f"tos_{year}_{doy:03d}.nc"), "w") as ds:
                    ds.Conventions = "CF-1.8"
                    ds.createDimension("time", None)
                    ds.createDimension(row, nj)
                    ds.createDimension(col, ni)
                    t = ds.createVariable("time", "f8", ("time",))
                    t.standard_name, t.units, t.calendar, t.axis = "time", f"days since {year}-01-01", "standard", "T"
                    t[:] = [doy - 0.5]
                    if kind == "cmip6":
                        ds.createDimension("vertices", 4)
                        for name, n, which in (("j", nj, "second"), ("i", ni, "first")):
                            v = ds.createVariable(name, "i4", (name,))
                            v.units, v.long_name = "1", f"cell index along {which} dimension"
                            v[:] = np.arange(n)
                        names = ("latitude", "longitude")
                    else:
                        for name, n, sn in (("rlat", nj, "grid_latitude"), ("rlon", ni, "grid_longitude")):
                            v = ds.createVariable(name, "f8", (name,))
                            v.standard_name, v.units, v.axis = sn, "degrees", "Y" if name == "rlat" else "X"
                            v[:] = np.arange(n) * 0.44
                        m = ds.createVariable("rotated_pole", "i4")
                        m.grid_mapping_name = "rotated_latitude_longitude"
                        m.grid_north_pole_latitude, m.grid_north_pole_longitude = 39.25, -162.0
                        names = ("lat", "lon")
                    for name, values, sn, units in ((names[0], lat2, "latitude", "degrees_north"),
                                                    (names[1], lon2, "longitude", "degrees_east")):
                        v = ds.createVariable(name, "f8", (row, col))
                        v.standard_name, v.units = sn, units
                        if kind == "cmip6":
                            v.bounds = f"vertices_{name}"
                            b = ds.createVariable(f"vertices_{name}", "f8", (row, col, "vertices"))
                            b[:] = np.repeat(values[:, :, None], 4, axis=2)
                        v[:] = values
                    v = ds.createVariable("tos", "f4", ("time", row, col), fill_value=np.float32(1e20))
                    v.standard_name, v.units = "sea_surface_temperature", "degC"
                    v.coordinates = " ".join(names)
                    if kind == "rotated":
                        v.grid_mapping = "rotated_pole"
                    a = (15 + 3 * np.sin(doy / 58.0 * np.pi) + rng.normal(0, 0.4, (nj, ni))).astype(np.float32)
                    a[2, 3] = np.float32(1e20)
                    v[0] = a
    return dirs


def curvilinear_runs():
    """Outputs of the curvilinear datasets: every layout keeps the grid (checked here), and
    returns {run name: output dir} for the compliance checker."""
    dirs = curvilinear_data(WORK)
    runs = {}
    job = ["--baseline", YEARS, "--doys", DOYS, "--half-window", "3", "--percentile", "10,90", "--threads", "2",
           "--overwrite"]
    for kind, d in dirs.items():
        for layout in ("stacked", "per-doy"):
            out = os.path.join(WORK, f"curvilinear-{kind}-{layout}")
            sh([BIN, "-q", "run", "--input", d, "--output", out, "--layout", layout] + job)
            runs[f"curvilinear-{kind}-{layout}"] = out
            for f in sorted(glob.glob(os.path.join(out, "*.nc"))):
                with netCDF4.Dataset(f) as ds:
                    names = ("latitude", "longitude") if kind == "cmip6" else ("lat", "lon")
                    dims = ("j", "i") if kind == "cmip6" else ("rlat", "rlon")
                    for v in stat_var(ds):
                        if ds[v].dimensions[1:] != dims:
                            fail(f"{f}: {v} dimensions {ds[v].dimensions}")
                        if ds[v].coordinates.split()[1:] != list(names):
                            fail(f"{f}: {v} coordinates {ds[v].coordinates}")
                        if kind == "rotated" and getattr(ds[v], "grid_mapping", None) != "rotated_pole":
                            fail(f"{f}: {v} has no grid_mapping")
                    if ds[names[0]].dimensions != dims:
                        fail(f"{f}: {names[0]} dimensions {ds[names[0]].dimensions}")
            # xarray makes the 2-D latitude and longitude coordinates, cf_xarray finds them
            f = sorted(glob.glob(os.path.join(out, "*.nc")))[0]
            with xr.open_dataset(f, decode_coords="all") as ds:
                for sn in ("latitude", "longitude"):
                    try:
                        c = ds.cf[sn]
                        if c.name not in ds.coords or c.ndim != 2:
                            fail(f"{f}: cf_xarray's {sn} is {c.name} ({c.ndim}-D)")
                    except Exception as e:  # noqa: BLE001
                        fail(f"{f}: cf_xarray finds no {sn}: {e}")
    return runs


def main():
    os.makedirs(WORK, exist_ok=True)
    data = os.path.join(WORK, "data")
    sh([BIN, "-q", "generate", "-o", data, "--grid", "128x64", "--years", YEARS, "--doys", "45-80",
        "--storage", "i16"])
    var = "analysed_sst"
    runs = {}
    for form, extra in FORMS.items():
        runs[f"stacked-{form}"] = run(f"stacked-{form}", "stacked", extra)
    runs["per-doy-f64"] = run("per-doy-f64", "per-doy", [])
    runs["per-doy-f32-deflate"] = run("per-doy-f32-deflate", "per-doy", FORMS["f32-deflate"])
    runs["per-doy-i16"] = run("per-doy-i16", "per-doy", FORMS["i16"])
    if shutil.which("mpirun"):
        runs["mpi-stacked-f64-deflate"] = run("mpi-stacked-f64-deflate", "stacked", FORMS["f64-deflate"], mpi=2)
        runs["mpi-stacked-f32-deflate"] = run("mpi-stacked-f32-deflate", "stacked", FORMS["f32-deflate"], mpi=2)
        runs["mpi-per-doy-i16"] = run("mpi-per-doy-i16", "per-doy", FORMS["i16"], mpi=2)
    else:
        print("mpirun not found: the MPI-assembled layout is not checked", file=sys.stderr)
    # the climatology layout: the whole year, float64 in the input's units (what `sstclim
    # events` reads back; --output-type, --deflate and --units are refused with it), from a
    # dataset of every day; its values are checked bitwise in tests/it/run/hobday.rs
    year_data = os.path.join(WORK, "data-year")
    sh([BIN, "-q", "generate", "-o", year_data, "--grid", "32x16", "--years", YEARS, "--doys", "1-366",
        "--storage", "i16"])
    clim = os.path.join(WORK, "climatology")
    sh([BIN, "-q", "run", "--input", year_data, "--output", clim, "--layout", "climatology", "--baseline", YEARS,
        "--doys", "1-366", "--half-window", "3", "--percentile", "10,90", "--calendar", "hobday366",
        "--feb29", "interpolate", "--smooth", "5", "--threads", "2", "--overwrite"])

    ref = stacked_values(runs["stacked-f64"])
    for name, d in runs.items():
        kind = "exact" if "f64" in name else "f32" if "f32" in name else "i16"
        got = stacked_values(d)
        compare(name, got, ref, kind)

    curvilinear = curvilinear_runs()
    checker(sorted(f for d in list(runs.values()) + list(curvilinear.values()) + [clim]
                   for f in glob.glob(os.path.join(d, "*.nc"))))
    for name, d in runs.items():
        xarray_round_trip(name, d, var)
    xarray_round_trip("climatology", clim, var, units="K")

    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print(f"OK: {len(runs)} runs ({', '.join(runs)}) and the climatology layout: CF-clean, equal to float64 as stored, read by xarray")


if __name__ == "__main__":
    main()
