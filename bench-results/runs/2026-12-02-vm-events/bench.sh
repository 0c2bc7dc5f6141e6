#!/usr/bin/env bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
: "${WORK:?set WORK to the directory holding the checkouts and binaries}"
# `sstclim events` on a 360x181 x 41-year (1982-2022) int16 dataset on the dev VM, heat and cold
# alternated, with wall time and peak RSS from /usr/bin/time; then marineHeatWaves' detect() per
# cell (scripts/events/mhw_fixture.py times it on 41-year series).
#   DATA=$SCRATCH/ev30/data CLIM=$SCRATCH/ev30/clim.nc BIN=target/release/sstclim VENV=$WORK/venv-ev30 \
#   MHW=$SCRATCH/ev30/marineHeatWaves.py bash bench-results/runs/2026-12-02-vm-events/bench.sh
set -euo pipefail
: "${DATA:?}" "${CLIM:?}" "${BIN:?}" "${VENV:?}" "${MHW:?}"
OUT=${OUT:-$SCRATCH/ev30/bench-out}
for rep in 1 2; do
  for kind in heat cold; do
    flags=(); [ "$kind" = cold ] && flags=(--cold)
    echo "== rep $rep $kind $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M kB" \
      "$BIN" -q events -i "$DATA" -o "$OUT" --years 1982-2022 --climatology "$CLIM" --overwrite "${flags[@]}"
  done
done
echo "== one thread $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M kB" \
  "$BIN" -q events -i "$DATA" -o "$OUT" --years 1982-2022 --climatology "$CLIM" --overwrite --threads 1
echo "== marineHeatWaves $(date -u +%H:%M:%S)"
"$VENV/bin/python" scripts/events/mhw_fixture.py "$MHW" $SCRATCH/ev30/mhw_cells_bench.json 2>&1 | grep -v Warning | tail -1
# the climatology the events read, for the per-cell comparison (marineHeatWaves' detect()
# computes its climatology too): today's run over the 1983-2012 baseline, all 366 days
echo "== sstclim run (the climatology) $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M kB" \
  "$BIN" -q run -i "$DATA" -o $SCRATCH/ev30/clim-run-bench --layout stacked --calendar hobday366 --years 1983-2012 \
  --doys 1-366 --percentile 10,90 --method 7 --overwrite > /dev/null
