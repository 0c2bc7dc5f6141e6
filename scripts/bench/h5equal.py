#!/usr/bin/env python3
"""Whether two result sets hold bitwise-equal data: every dataset of every NetCDF-4/HDF5 file,
paired by file name and dataset path, compared byte for byte (NaNs equal to NaNs of the same
bits). Attributes are not compared (`history` and the run's provenance differ between runs).

Used by scripts/bench/scale-gpus.sh for outputs that `sstclim compare` does not read (the
event catalogue's record variables). Needs only numpy and h5py (both on the GPU node).

Usage: h5equal.py A B     (directories or files); exit 0 when equal, 1 otherwise."""
import pathlib
import sys

import h5py
import numpy as np


def datasets(path):
    found = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                found[name] = np.asarray(data).tobytes() if not isinstance(data, bytes) else data
        f.visititems(visit)
    return found


def pairs(a, b):
    a, b = pathlib.Path(a), pathlib.Path(b)
    if a.is_file():
        return [(a, b)]
    names = sorted({p.name for p in a.glob("*.nc")} | {p.name for p in b.glob("*.nc")})
    return [(a / n, b / n) for n in names]


def main():
    problems, compared = [], 0
    for fa, fb in pairs(sys.argv[1], sys.argv[2]):
        if not fa.exists() or not fb.exists():
            problems.append(f"{fa.name}: present on one side only")
            continue
        da, db = datasets(fa), datasets(fb)
        for name in sorted(set(da) | set(db)):
            if name not in da or name not in db:
                problems.append(f"{fa.name}:{name}: present on one side only")
            elif da[name] != db[name]:
                problems.append(f"{fa.name}:{name}: values differ")
            else:
                compared += 1
    for p in problems:
        print(p)
    print(f"{'EQUAL' if not problems else 'DIFFERENT'}: {compared} datasets bitwise equal, {len(problems)} problems")
    sys.exit(0 if not problems else 1)


main()
