: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 30's performance target on the H200 node, after the events speed-up (branch s35-events):
# a global 1440x721 int16 dataset, 1982-2022, every day (14,975 files) stored as OISST v2.1 is
# (time, zlev, lat, lon), deflated (level 4) and shuffled, one chunk a file, generated here;
# the climatology 1983-2012 with marineHeatWaves' defaults (P10 and P90 in one file); then, in
# the same script and warm page cache:
#   - the read-and-inflate floor of those files (bench-read --inflate: locate, pread, inflate,
#     unshuffle every chunk on all threads, no decoding), before each events run;
#   - `sstclim events --both` (heatwaves and cold spells from one read, all four files), twice,
#     with --max-mem 100G (one band: the whole grid's int16 series is 31 GB);
#   - heat alone and --cold alone, once each (as the previous run measured them).
# Outputs go to the node's disk ($SCRATCH/r35/ev); the dirty pages of the generated files are
# synced before anything is timed. Expects .carry/bins.tar.xz holding the stripped static
# binary `sstclim` (features netcdf-static,bench), like ../2026-12-02-h200-events/call.sh.
# Usage (device tool, from the repository root): bash bench-results/runs/2026-12-02-h200-events2/call.sh
# Results: $OUT/summary.txt, $OUT/machine.txt, $OUT/r-events2.tgz (logs of every step).
set -u
R=$SCRATCH/r35res
# the measurements run under a time limit, so that the results are packed even where the
# device call's limit would cut them short
if [ "${INNER:-}" != 1 ]; then
  mkdir -p $R
  INNER=1 timeout ${LIMIT:-560} bash $0; echo "measurements rc=$? (124: cut at the time limit)" | tee -a $OUT/summary.txt
  cp $0 $OUT/call.sh 2>/dev/null
  (cd $R && tar czf $OUT/r-events2.tgz .)
  exit 0
fi
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/r35 D=$SCRATCH/r35/data
mkdir -p $W
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine.txt 2>&1
# t NAME CMD...: wall, CPU and peak memory of CMD, and its result line
t() {
  local name=$1; shift
  /usr/bin/time -f "$name wall %e s user %U s sys %S s maxrss %M kB" "$@" > $R/$name.log 2>&1
  local rc=$?
  echo "$name rc=$rc $(tail -1 $R/$name.log) | $(grep -E 'events in|inflate floor|wrote [0-9]+ files' $R/$name.log | head -1)" | tee -a $S
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
  t events-both-$r $X "${EV[@]}" --both
  ls -la $W/ev >> $R/outputs-both-$r.txt
done
t events-heat $X "${EV[@]}"
t events-cold $X "${EV[@]}" --cold
ls -la $W/ev | tee -a $S
free -g >> $S
