#!/usr/bin/env python3
"""Write the stored (deflated, shuffled) chunks of one variable of a NetCDF-4 file, one file
each, for `inflate-compare`: python3 dump_chunks.py FILE VAR OUTDIR (needs h5py)."""
import os
import sys

import h5py

path, var, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
with h5py.File(path, "r") as f:
    ds = f[var]
    n = ds.id.get_num_chunks()
    for i in range(n):
        info = ds.id.get_chunk_info(i)
        mask, data = ds.id.read_direct_chunk(info.chunk_offset)
        with open(os.path.join(out, f"chunk{i}.z"), "wb") as o:
            o.write(data)
    print(n, "chunks,", ds.chunks, ds.compression, ds.shuffle, "raw bytes per chunk:", ds.dtype.itemsize * __import__("numpy").prod(ds.chunks))
