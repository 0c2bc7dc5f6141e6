#!/usr/bin/env bash
# Issue 42, item 4 on the dev VM: the `run --layout climatology` write stage before (main's
# binary: one writer, libnetcdf) and after (every write thread), float64 by default and
# `--output-type f32 --deflate 1`, with `bench-write-floor --like` on each output for the
# disk's floor; alternating, REPEATS times (default 3). The outputs are compared with
# `sstclim compare --tolerance 0` (float64 before/after; float32 against float64 as a check
# of the rounding only, not of equality).
#   bash scripts/bench/climfile-vm.sh BEFORE_BIN AFTER_BIN DATA OUT [REPEATS]
# DATA: `sstclim generate --grid 360x181 --years 1982-2022 --doys 1-366 --storage i16`.
set -u
B=$1 A=$2 D=$3 O=$4 R=${5:-3}
W=${SCRATCH:-/tmp}/climfile-vm-out
mkdir -p "$W" "$O"
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
S=$O/summary.txt; : > "$S"
log() { echo "$*" | tee -a "$S"; }
{ date -u; uname -a; nproc; free -g; "$B" --version; "$A" --version; } > "$O/machine.txt" 2>&1
# Hobday's rules, P10 and P90: the file `events --both` reads
HOB=(--baseline 1983-2012 --calendar hobday366 --window-edges extend --feb29 interpolate --smooth 31 --method 7
  --percentile 10,90 --layout climatology --overwrite)
stage() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('%.2f' % d['stage_seconds'].get('write', -1), '%.2f' % d['wall_seconds'])" "$1"; }
floor() { "$A" bench-write-floor --like "$1" --dir "$W/floor" --repeats 1 --json "$2" > /dev/null 2>&1 &&
  python3 -c "import json,sys; print('%.2f' % json.load(open(sys.argv[1]))['median_seconds'])" "$2"; }
for rep in $(seq 1 "$R"); do
  for w in B A; do bin=${!w}
    "$bin" -q run --input "$D" --output "$W/$w-f64" "${HOB[@]}" --timing-json "$O/$w-f64-$rep.json" 2>>"$O/stderr.txt"
    log "rep $rep $w f64: write/wall $(stage "$O/$w-f64-$rep.json") s; floor $(floor "$W/$w-f64" "$O/floor-$w-f64-$rep.json") s"
  done
  "$A" -q run --input "$D" --output "$W/A-f32d1" "${HOB[@]}" --output-type f32 --deflate 1 \
    --timing-json "$O/A-f32d1-$rep.json" 2>>"$O/stderr.txt"
  log "rep $rep A f32 deflate 1: write/wall $(stage "$O/A-f32d1-$rep.json") s; floor $(floor "$W/A-f32d1" "$O/floor-A-f32d1-$rep.json") s"
done
ls -l "$W"/B-f64 "$W"/A-f64 "$W"/A-f32d1 >> "$S"
"$A" compare "$W/B-f64" "$W/A-f64" --tolerance 0 > "$O/compare-f64.txt" 2>&1; log "compare f64 before/after: rc=$? $(tail -1 "$O/compare-f64.txt")"
