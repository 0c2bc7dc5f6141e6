#!/bin/bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
: "${WORK:?set WORK to the directory holding the checkouts and binaries}"
# `sstclim events` before (main's binary: heat, then --cold) and after (this branch: --both,
# then heat alone), alternated, two repeats, on the 360x181 x 41-year int16 dataset; then the
# outputs compared bitwise (compare.py). Usage, with the binaries and data in $W:
#   W=$SCRATCH/ev35 bash bench-results/runs/2026-12-02-vm-events2/ab.sh
W=${W:-$SCRATCH/ev35}
H=$(cd "$(dirname "$0")" && pwd)
cd $W
ev() { # binary out flags...
  local b=$1 o=$2; shift 2
  echo "== $b $* $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M kB" ./sstclim-$b events -i data -o $o \
    --years 1982-2022 --climatology clim/climatology.nc --overwrite "$@" 2>&1 | grep -v "wrote\|INFO"
}
for rep in 1 2; do
  ev main out-main; ev main out-main --cold
  ev new out-both --both; ev new out-heat
done
$WORK/venv-ev30/bin/python $H/compare.py out-main out-both
