#!/usr/bin/env bash
# The read stage of the 360x181, 10-year, days 1-366 job from 3652 daily files against the
# same values in 10 yearly files (chunks of one step, and chunks of 30 steps x 91 x 180),
# alternating A/B/C, warm page cache (one unmeasured run of each first).
# usage: run.sh SSTCLIM DATA_DIR REPEATS   (DATA_DIR holds daily/, yearly-c1/, yearly-c30/)
set -euo pipefail
bin=$1 data=$2 repeats=${3:-3}
cd "$data"
one() { # name input
    "$bin" run --years 2001-2010 --doys 1-366 --percentile 10,90 -i "$2" -o "out-$1" --overwrite \
        --progress off --segments 1 --timing-json "t-$1.json" -q >/dev/null 2>&1
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], 'read', round(d['stage_seconds']['read'],3), 'wall', round(d['wall_seconds'],3), 'decompressed', d['bytes_decompressed'], 'direct', d['files_direct'])" "t-$1.json" "$1"
}
for s in daily yearly-c1 yearly-c30; do one "$s" "$s" >/dev/null; done
for r in $(seq "$repeats"); do
    for s in daily yearly-c1 yearly-c30; do echo "run $r $(one "$s" "$s")"; done
done
"$bin" compare out-daily out-yearly-c1 | tail -1
"$bin" compare out-daily out-yearly-c30 | tail -1
