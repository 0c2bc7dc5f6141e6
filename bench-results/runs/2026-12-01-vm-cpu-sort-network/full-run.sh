#!/usr/bin/env bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Full-size CPU runs, the CPU engine before (OLD) and after (NEW) the straight-line sort
# networks, alternating, every run from a cold page cache (the files' pages dropped first).
#   OLD=$SCRATCH/sstclim-old NEW=$SCRATCH/sstclim-new bash full-run.sh OUTDIR DATADIR ROUNDS
set -euo pipefail
out=$1 data=$2 rounds=${3:-2}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
[ -d "$data" ] || "$NEW" -q generate --output "$data" --grid 1440x721 --years 1991-2020 --doys 147-248
for r in $(seq 1 "$rounds"); do
    for v in old new; do
        bin=$OLD; [ "$v" = new ] && bin=$NEW
        python3 "$here/scripts/evict-page-cache.py" "$data" > /dev/null
        rm -rf "$SCRATCH/cpu-full-out-$v"
        /usr/bin/time -f "%e s %M KB" -o "$out/run-$v-$r.time" "$bin" -q run --input "$data" \
            --output "$SCRATCH/cpu-full-out-$v" --years 1991-2020 --doys 152-243 --backend cpu \
            --rates none --timing-json "$out/run-$v-$r.json"
        echo "$r $v $(cat "$out/run-$v-$r.time")"
    done
done
"$NEW" compare $SCRATCH/cpu-full-out-old $SCRATCH/cpu-full-out-new --tolerance 0 > "$out/compare.txt" 2>&1 && echo "outputs equal bitwise"
