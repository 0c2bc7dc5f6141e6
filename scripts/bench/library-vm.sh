#!/usr/bin/env bash
# Issue 41, item 7 on the dev VM: every output of the library restructure bitwise equal to the
# binary before it (sstclim compare --tolerance 0), and the times of both, alternating.
#   bash scripts/bench/library-vm.sh BEFORE_BIN AFTER_BIN WORK OUT
set -u
B=$1 A=$2 W=$3 O=$4
mkdir -p "$W" "$O"
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
S=$O/summary.txt; : > "$S"
log() { echo "$*" | tee -a "$S"; }
t() { local t0; t0=$(date +%s.%N); "$@" > /dev/null 2>>"$O/stderr.txt"; local rc=$?; awk -v a="$t0" -v b="$(date +%s.%N)" -v rc=$rc 'BEGIN{printf "%.2f s rc=%d", b-a, rc}'; }
cmp0() { "$A" compare "$1" "$2" --tolerance 0 > "$O/compare-$3.txt" 2>&1; log "compare $3: rc=$? $(tail -1 "$O/compare-$3.txt")"; }
# the binaries name the climatology years differently: --years before, --baseline after
yb() { if [ "$1" = "$B" ]; then echo --years; else echo --baseline; fi; }
{ date -u; uname -a; nproc; "$B" --version; "$A" --version; } > "$O/machine.txt" 2>&1
[ -d "$W/ref" ] || "$A" -q generate --output "$W/ref" --grid 360x181 --years 1991-2020 --doys 147-248
[ -d "$W/year" ] || "$A" -q generate --output "$W/year" --grid 90x46 --years 1990-2012 --doys 1-366 --storage i16
for rep in 1 2; do
  for w in B A; do bin=${!w}
    log "rep $rep $w reference 360x181 cpu: $(t "$bin" -q run --input "$W/ref" --output "$W/$w-ref" $(yb "$bin") 1991-2020 --doys 152-243 --backend cpu --overwrite)"
    log "rep $rep $w hobday 90x46: $(t "$bin" -q run --input "$W/year" --output "$W/$w-hob" $(yb "$bin") 1991-2010 --calendar hobday366 --window-edges extend --feb29 interpolate --smooth 31 --method 7 --percentile 10,90 --layout climatology --overwrite)"
    log "rep $rep $w events --both 1 band: $(t "$bin" -q events --input "$W/year" --output "$W/$w-ev1" --years 1990-2012 --climatology "$W/$w-hob/climatology.nc" --both --overwrite)"
    log "rep $rep $w events --both 2 bands: $(t "$bin" -q events --input "$W/year" --output "$W/$w-ev2" --years 1990-2012 --climatology "$W/$w-hob/climatology.nc" --both --max-mem 60M --overwrite)"
    log "rep $rep $w events --baseline --both f32 deflate: $(t "$bin" -q events --input "$W/year" --output "$W/$w-evb" --years 1990-2012 --baseline 1991-2010 --both --output-type f32 --deflate 1 --overwrite)"
  done
done
cmp0 "$W/B-ref" "$W/A-ref" reference
cmp0 "$W/B-hob" "$W/A-hob" hobday
cmp0 "$W/B-ev1" "$W/A-ev1" events-1band
cmp0 "$W/B-ev2" "$W/A-ev2" events-2bands
cmp0 "$W/A-ev1" "$W/A-ev2" events-1-vs-2-bands-after
cmp0 "$W/B-evb" "$W/A-evb" events-baseline
for n in 1 2 3; do
  for w in B A; do bin=${!w}
    log "$w mpi $n ranks run: $(t mpirun --oversubscribe -np $n "$bin" -q run --input "$W/ref" --output "$W/$w-mpi$n" $(yb "$bin") 1991-2020 --doys 152-243 --backend cpu --overwrite)"
    log "$w mpi $n ranks events: $(t mpirun --oversubscribe -np $n "$bin" -q events --input "$W/year" --output "$W/$w-evmpi$n" --years 1990-2012 --climatology "$W/$w-hob/climatology.nc" --both --overwrite)"
  done
  cmp0 "$W/B-mpi$n" "$W/A-mpi$n" "mpi$n-run"
  cmp0 "$W/A-ref" "$W/A-mpi$n" "mpi$n-run-vs-1"
  cmp0 "$W/B-evmpi$n" "$W/A-evmpi$n" "mpi$n-events"
done
