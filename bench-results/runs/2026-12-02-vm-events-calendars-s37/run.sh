#!/bin/bash
# VM measurement: `sstclim events` on a 360_day dataset against the same job on a gregorian one
# (make_data.py: 360x181 float32, yearly files 2001-2003), alternating, PAIRS pairs; then main's
# binary on the gregorian job for a bitwise check of the unchanged path.
# Usage: run.sh DATA_DIR SSTCLIM [MAIN_SSTCLIM] [PAIRS]
set -eu
D=$1; B=$2; M=${3:-}; PAIRS=${4:-3}
cd "$D"
for c in gregorian 360_day; do
  [ -f clim-$c/climatology.nc ] || "$B" -q run -i $c -o clim-$c --years 2001-2003 --layout climatology \
    --calendar hobday366 --smooth 31 --percentile 90 --overwrite
done
for p in $(seq 1 "$PAIRS"); do
  for c in gregorian 360_day; do
    # the job's own line (events, read/detect/write seconds) and the process' wall, CPU and RSS
    /usr/bin/time -f "pair $p $c wall %e s cpu %U+%S s peak_rss %M kB" "$B" events -i $c -o ev-$c \
      --years 2001-2003 --climatology clim-$c/climatology.nc --overwrite 2>&1 | grep -E "events in|^pair"
  done
done
if [ -n "$M" ]; then
  "$M" -q events -i gregorian -o ev-main --years 2001-2003 --climatology clim-gregorian/climatology.nc --overwrite
fi
