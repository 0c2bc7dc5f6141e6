# Issue 30's performance target on the H200 node after stop 36's events work (branch s36-h30:
# events.nc written directly to contiguous columns with pwrite from every thread when the
# grid is one band; int16 days compared with the thresholds as stored; summaries staged as
# float32; outputs fsynced on every thread). Data as ../2026-12-02-h200-events2/call.sh: a
# global 1440x721 int16 dataset, 1982-2022, every day (14,975 files), (time, zlev, lat, lon),
# deflate 4 + shuffle, one chunk a file, generated here; the climatology 1983-2012 with
# marineHeatWaves' defaults (P10 and P90 in one file). Then, in the same script and warm
# page cache:
#   - the read-and-inflate floor (bench-read --inflate, median of 3), before each events run;
#   - `sstclim events --both` (heat and cold from one read, all four files, fsynced), twice,
#     --max-mem 100G (one band);
#   - the disk's floor for those outputs: bench-write-floor --like the outputs (same names
#     and bytes, pwrite from 4 threads, fsync, rename; median of 2).
# Expects .carry/bins.tar.xz holding the stripped static binary `sstclim` (features
# netcdf-static,bench) of the merged tree.
# Usage (device tool, from the repository root):
#   bash bench-results/runs/2026-12-02-h200-events-s36/call.sh; cat $OUT/summary.txt
# Results: $OUT/summary.txt, $OUT/machine.txt, $OUT/r-events-s36.tgz (logs of every step).
set -u
R=/tmp/r36res
# the measurements run under a time limit, so that the results are packed even where the
# device call's limit would cut them short
if [ "${INNER:-}" != 1 ]; then
  mkdir -p $R
  INNER=1 timeout ${LIMIT:-540} bash $0; echo "measurements rc=$? (124: cut at the time limit)" | tee -a $OUT/summary.txt
  cp $0 $OUT/call.sh 2>/dev/null
  (cd $R && tar czf $OUT/r-events-s36.tgz .)
  exit 0
fi
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=/tmp/r36 D=/tmp/r36/data
mkdir -p $W
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h /tmp; cat /sys/kernel/mm/transparent_hugepage/enabled; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine.txt 2>&1
# t NAME CMD...: wall, CPU and peak memory of CMD, and its result line
t() {
  local name=$1; shift
  /usr/bin/time -f "$name wall %e s user %U s sys %S s maxrss %M kB" "$@" > $R/$name.log 2>&1
  local rc=$?
  echo "$name rc=$rc $(tail -1 $R/$name.log) | $(grep -E 'events in|inflate floor|write floor|wrote [0-9]+ files' $R/$name.log | head -1)" | tee -a $S
}
GEN=(--grid 1440x721 --years 1982-2022 --doys 1-366 --storage i16 --time-dim --zlev-dim --deflate 4 --shuffle)
t generate $X -q generate --output $D "${GEN[@]}"
echo "data: $(ls $D | wc -l) files, $(du -sh $D | cut -f1)" | tee -a $S
t sync sync
t climatology $X -q run --input $D --output $W/clim --years 1983-2012 --calendar hobday366 --percentile 10,90 \
  --method 7 --window-edges extend --feb29 interpolate --smooth 31 --layout climatology
EV=(events --input $D --output $W/ev --years 1982-2022 --climatology $W/clim/climatology.nc --overwrite --max-mem 100G)
for r in 1 2; do
  t floor-inflate-$r $X bench-read --input $D --years 1982-2022 --doys 1-366 --half-window 0 --inflate --repeats 3
  sync
  t events-both-$r $X "${EV[@]}" --both
  ls -la $W/ev | tee $R/outputs-both-$r.txt
done
sync
t write-floor $X bench-write-floor --like $W/ev --dir $W/floor --threads 4 --repeats 2
ls -la $W/ev | tee -a $S
free -g >> $S
