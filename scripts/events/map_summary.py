#!/usr/bin/env python3
"""A map of one summary statistic of `sstclim events`, averaged over the years (e.g. the mean
annual number of heatwave days, `total_days`), as a PNG. Needs numpy, netCDF4 and matplotlib.

    python3 scripts/events/map_summary.py OUT/summary.nc total_days map.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import netCDF4
import numpy as np


def main():
    path, stat, png = sys.argv[1:4]
    d = netCDF4.Dataset(path)
    v = d[stat][:].filled(np.nan)
    lat_name, lon_name = d[stat].dimensions[1:]
    lat, lon = d[lat_name][:], d[lon_name][:]
    field = np.nanmean(v, axis=0) if np.isfinite(v).any() else v[0]
    fig, ax = plt.subplots(figsize=(8, 4), dpi=90)
    m = ax.pcolormesh(lon, lat, field, shading="auto", cmap="magma")
    fig.colorbar(m, ax=ax, label=f"{stat} ({d[stat].units}), mean of the years")
    ax.set_title(f"{d.title}\nmean over {d.analysis_years}: {stat}", fontsize=9)
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    fig.tight_layout()
    fig.savefig(png)


if __name__ == "__main__":
    main()
