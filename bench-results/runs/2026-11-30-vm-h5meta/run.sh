#!/usr/bin/env bash
# `sstclim run --backend cpu` before (the base commit 3cdc806: locating through libhdf5 in forked
# processes) and after (reader threads parse the HDF5 metadata), alternating, 3 runs each, fresh
# output directory each run; "after-lib" is the new binary with SSTCLIM_H5META=off (forked
# libhdf5 locating, as before). Dataset: sstclim generate --grid 360x181 --years 1991-2020
# --doys 147-248 (3060 files).
#   run.sh BEFORE_BIN AFTER_BIN DATA WORK [RESULTS_DIR (default: this directory)]
set -euo pipefail
BEFORE=$1 AFTER=$2 DATA=$3 WORK=$4
OUT=${5:-$(cd "$(dirname "$0")" && pwd)}
mkdir -p "$OUT"
: > "$OUT/runs.txt"
for i in 1 2 3; do
  for v in before after after-lib; do
    case $v in
      before) S=$BEFORE; ENV=() ;;
      after) S=$AFTER; ENV=() ;;
      after-lib) S=$AFTER; ENV=(SSTCLIM_H5META=off) ;;
    esac
    rm -rf "$WORK/out-$v"
    t0=$(date +%s.%N)
    env "${ENV[@]}" "$S" -q run --input "$DATA" --years 1991-2020 --doys 152-243 --backend cpu \
      --output "$WORK/out-$v" --timing-json "$OUT/run-$v-$i.json" --trace-json "$OUT/trace-$v-$i.json" > /dev/null
    t1=$(date +%s.%N)
    echo "$v repeat=$i $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s" | tee -a "$OUT/runs.txt"
  done
done
"$AFTER" compare "$WORK/out-before" "$WORK/out-after" --tolerance 0 > "$OUT/compare.txt" 2>&1 \
  && echo "before and after outputs equal bitwise" | tee -a "$OUT/runs.txt"
"$AFTER" compare "$WORK/out-after-lib" "$WORK/out-after" --tolerance 0 >> "$OUT/compare.txt" 2>&1 \
  && echo "after-lib and after outputs equal bitwise" | tee -a "$OUT/runs.txt"
