: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 30's performance target on the H200 node after stop 37's events work (branch s37-h33:
# `events --output-type f32 --deflate 1`: the catalogue's float fields in float32, events.nc
# and the summaries chunked and compressed on every thread by the project's chunk coder).
# Data as ../2026-12-02-h200-events-s36/call.sh, at the same path (reused when a previous
# script of this stop left it there): a global 1440x721 int16 dataset, 1982-2022, every day
# (14,975 files), (time, zlev, lat, lon), deflate 4 + shuffle, one chunk a file; the
# climatology 1983-2012 with marineHeatWaves' defaults (P10 and P90 in one file). Then, in the
# same script and warm page cache, two alternating pairs of:
#   - the read-and-inflate floor (bench-read --inflate, median of 3), before each pair;
#   - `sstclim events --both --max-mem 100G` (one band; the default outputs: float64 fields,
#     uncompressed), then the same with `--output-type f32 --deflate 1`;
# then the disk's floor for each run's outputs: bench-write-floor --like (same names and
# bytes, pwrite from 4 threads, fsync, rename; median of 2), and the outputs' sizes.
# Expects .carry/bins.tar.xz holding the stripped static binary `sstclim` (features
# netcdf-static,bench) of the merged tree. About 230 s with the data generated here, 150 s
# when reused.
# Usage (device tool, from the repository root):
#   bash bench-results/runs/2026-12-02-h200-events-s37/call.sh; cat $OUT/summary.txt
# Results: $OUT/summary.txt, $OUT/machine.txt, $OUT/r-events-s37.tgz (logs of every step).
set -u
R=$SCRATCH/r37res
# the measurements run under a time limit, so that the results are packed even where the
# device call's limit would cut them short
if [ "${INNER:-}" != 1 ]; then
  mkdir -p $R
  INNER=1 timeout ${LIMIT:-400} bash $0; echo "measurements rc=$? (124: cut at the time limit)" | tee -a $OUT/summary.txt
  cp $0 $OUT/call.sh 2>/dev/null
  (cd $R && tar czf $OUT/r-events-s37.tgz .)
  exit 0
fi
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
# the data at s36's path (reused); this script's own outputs beside it
X=$PWD/.carry/sstclim W=$SCRATCH/r37 D=$SCRATCH/r36/data
mkdir -p $W
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH; cat /sys/kernel/mm/transparent_hugepage/enabled; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine.txt 2>&1
# t NAME CMD...: wall, CPU and peak memory of CMD, and its result line
t() {
  local name=$1; shift
  /usr/bin/time -f "$name wall %e s user %U s sys %S s maxrss %M kB" "$@" > $R/$name.log 2>&1
  local rc=$?
  echo "$name rc=$rc $(tail -1 $R/$name.log) | $(grep -E 'events in|inflate floor|write floor|wrote [0-9]+ files' $R/$name.log | head -1)" | tee -a $S
}
GEN=(--grid 1440x721 --years 1982-2022 --doys 1-366 --storage i16 --time-dim --zlev-dim --deflate 4 --shuffle)
if [ "$(ls $D 2>/dev/null | wc -l)" = 14975 ]; then
  echo "data: reused $D" | tee -a $S
else
  rm -rf $D
  t generate $X -q generate --output $D "${GEN[@]}"
fi
echo "data: $(ls $D | wc -l) files, $(du -sh $D | cut -f1)" | tee -a $S
t sync sync
C=$SCRATCH/r36/clim/climatology.nc
if [ -s $C ]; then
  echo "climatology: reused $C" | tee -a $S
else
  C=$W/clim/climatology.nc
  t climatology $X -q run --input $D --output $W/clim --years 1983-2012 --calendar hobday366 --percentile 10,90 \
    --method 7 --window-edges extend --feb29 interpolate --smooth 31 --layout climatology
fi
EV=(events --input $D --years 1982-2022 --climatology $C --overwrite --max-mem 100G --both)
for r in 1 2; do
  t floor-inflate-$r $X bench-read --input $D --years 1982-2022 --doys 1-366 --half-window 0 --inflate --repeats 3
  sync
  t events-default-$r $X "${EV[@]}" --output $W/ev
  ls -la $W/ev > $R/outputs-default-$r.txt
  sync
  t events-f32-deflate1-$r $X "${EV[@]}" --output $W/ev32 --output-type f32 --deflate 1
  ls -la $W/ev32 > $R/outputs-f32-deflate1-$r.txt
done
sync
t write-floor-default $X bench-write-floor --like $W/ev --dir $W/floor --threads 4 --repeats 2
t write-floor-f32-deflate1 $X bench-write-floor --like $W/ev32 --dir $W/floor --threads 4 --repeats 2
for d in ev ev32; do echo "$d: $(du -cb $W/$d/*.nc | tail -1)"; ls -la $W/$d; done | tee -a $S
free -g >> $S
