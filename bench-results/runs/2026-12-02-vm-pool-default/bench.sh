#!/usr/bin/env bash
# f64 against i16 pool on int16-packed (OSTIA-like) input, CPU engine, alternating A/B.
# usage: bench.sh BIN WORKDIR GRID REPEATS
set -euo pipefail
BIN=$1; WORK=$2; GRID=$3; REPEATS=${4:-3}
DATA=$WORK/data-$GRID
mkdir -p "$WORK"
[ -d "$DATA" ] || "$BIN" -q generate --output "$DATA" --grid "$GRID" --years 1991-2020 --doys 147-248 --storage i16 --time-dim
echo "grid,repeat,pool,wall_s,peak_rss_mb" > "$WORK/results-$GRID.csv"
for r in $(seq 1 "$REPEATS"); do
  for pool in f64 i16; do
    out=$WORK/out-$GRID-$pool
    /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$BIN" -q run --input "$DATA" --output "$out" \
      --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --backend cpu --pool $pool \
      --rates none --overwrite --timing-json "$WORK/report-$GRID-$pool-$r.json" > /dev/null
    read wall rss < "$WORK/time.txt"
    echo "$GRID,$r,$pool,$wall,$((rss / 1024))" | tee -a "$WORK/results-$GRID.csv"
  done
done
"$BIN" compare "$WORK/out-$GRID-f64" "$WORK/out-$GRID-i16" --tolerance 0 | tail -3 > "$WORK/compare-$GRID.txt"
cat "$WORK/compare-$GRID.txt"
