#!/bin/bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# `sstclim events --both` on the 360x181 x 41-year deflated int16 dataset: main's binary
# (before), this branch's with its default outputs, and this branch's with
# `--output-type f32 --deflate 1`, alternated; each run's wall/CPU/peak RSS and its own
# read/detect/write split, with the load average; then before's and the default's outputs
# compared bitwise (../2026-12-02-vm-events2/compare.py) and the small outputs against the
# default (compare_store.py), and each set's size. Usage, with sstclim-main, sstclim-new,
# data/ and clim/ in $W:  W=$SCRATCH/ev37 PY=.../python bash ab.sh [REPEATS]
W=${W:-$SCRATCH/ev37}
H=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
cd $W
ev() { # name binary flags...
  local name=$1 b=$2; shift 2
  echo "== $name $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M kB" ./sstclim-$b events -i data -o out-$name \
    --years 1982-2022 --climatology clim/climatology.nc --overwrite --both "$@" 2>&1 | grep -E "events in|wall"
}
for rep in $(seq 1 ${1:-2}); do
  ev main main
  ev new new
  ev f32d1 new --output-type f32 --deflate 1
done
$PY $H/../2026-12-02-vm-events2/compare.py out-main out-new
$PY $H/compare_store.py out-new out-f32d1
for d in out-main out-new out-f32d1; do echo "$d: $(du -cb $d/*.nc | tail -1 | cut -f1) bytes"; done
