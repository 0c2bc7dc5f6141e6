#!/bin/bash
# `sstclim events --both` before (main's binary, 8271ee6) and after (this branch), alternated,
# on the 360x181 x 41-year deflated int16 dataset; each run's wall/CPU/peak RSS and its own
# read/detect/write split, with the load average; then the outputs compared bitwise
# (../2026-12-02-vm-events2/compare.py). Usage, with sstclim-main, sstclim-new, data/ and
# clim/ in $W:  W=/tmp/ev36 bash bench-results/runs/2026-12-02-vm-events-s36/ab.sh [REPEATS]
W=${W:-/tmp/ev36}
H=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
cd $W
ev() { # binary
  local b=$1
  echo "== $b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M kB" ./sstclim-$b events -i data -o out-$b \
    --years 1982-2022 --climatology clim/climatology.nc --overwrite --both 2>&1 | grep -E "events in|wall"
}
for rep in $(seq 1 ${1:-3}); do
  ev main; ev new
done
$PY $H/../2026-12-02-vm-events2/compare.py out-main out-new
