#!/usr/bin/env bash
# Issue 42, items 1 and 3 on the dev VM: `events --both --climatology C --output-type f32
# --deflate 1` on 360x181 int16 (deflate 4 + shuffle) x 41 years (1982-2022), one band against
# four (--max-mem; bands now write as fast as one) and against the default plan (four bands, the
# next read while one is detected), alternating, with main's binary beside it; every output
# compared with --tolerance 0.
#   bash scripts/bench/events-bands-vm.sh BEFORE_BIN AFTER_BIN WORK OUT
set -u
B=$1 A=$2 W=$3 O=$4
mkdir -p "$W" "$O"
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
S=$O/summary.txt; : > "$S"
log() { echo "$*" | tee -a "$S"; }
# wall seconds of a command, its report line kept
t() { local t0; t0=$(date +%s.%N); "$@" > "$O/last.txt" 2>>"$O/stderr.txt"; local rc=$?; awk -v a="$t0" -v b="$(date +%s.%N)" -v rc=$rc 'BEGIN{printf "%.2f s rc=%d", b-a, rc}'; echo " | $(grep -m1 ' events in ' "$O/last.txt")"; }
cmp0() { "$A" compare "$1" "$2" --tolerance 0 > "$O/compare-$3.txt" 2>&1; log "compare $3: rc=$? $(tail -1 "$O/compare-$3.txt")"; }
{ date -u; uname -a; nproc; free -g; "$B" --version; "$A" --version; } > "$O/machine.txt" 2>&1
D=$W/data C=$W/clim
[ -d "$D" ] || "$A" -q generate --output "$D" --grid 360x181 --years 1982-2022 --doys 1-366 --storage i16 --deflate 4 --shuffle
[ -f "$C/climatology.nc" ] || "$A" -q run --input "$D" --output "$C" --layout climatology --baseline 1983-2012 \
  --calendar hobday366 --window-edges extend --feb29 interpolate --smooth 31 --method 7 --percentile 10,90
ev() { local bin=$1 out=$2; shift 2; "$bin" events --input "$D" --output "$W/$out" --years 1982-2022 --climatology "$C/climatology.nc" --both --output-type f32 --deflate 1 --overwrite "$@"; }
for rep in 1 2 3; do
  log "rep $rep after default (1 band): $(t ev "$A" a1)"
  log "rep $rep after 4 bands (--max-mem 2400M): $(t ev "$A" a4 --max-mem 2400M)"
  log "rep $rep after 4 overlapped bands (--threads 4): $(t ev "$A" ad --threads 4)"
done
log "before 1 band (--max-mem 8G): $(t ev "$B" b1 --max-mem 8G)"
log "before 4 bands (--max-mem 1800M): $(t ev "$B" b4 --max-mem 1800M)"
cmp0 "$W/a1" "$W/a4" after-1-vs-4-bands
cmp0 "$W/a1" "$W/ad" after-1-band-vs-overlapped
cmp0 "$W/b1" "$W/a1" before-vs-after-1-band
cmp0 "$W/b4" "$W/a4" before-vs-after-4-bands
