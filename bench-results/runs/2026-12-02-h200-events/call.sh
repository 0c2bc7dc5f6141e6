# Issue 30 on the H200 node (NOT RUN YET; the lead runs it once this branch is merged beside
# issue 29's `run --layout climatology`, in main at 9c71b72): a global 1440x721 int16
# dataset 1982-2022 (every day), the climatology 1983-2012 (marineHeatWaves' defaults), then `sstclim events` for heat and cold, against the
# time to read every file (bench-read, the pread floor) in the same script. Expects
# .carry/bins.tar.xz holding the stripped static binary `sstclim` (features bench), like
# bench-results/runs/2026-12-02-h200-restructure/call.sh; writes $OUT/r-events.tgz.
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=/tmp/r30 D=/tmp/r30/data
mkdir -p $OUT/e $W
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; $X --version; } > $OUT/machine.txt 2>&1
t() { local name=$1; shift; /usr/bin/time -f "$name wall %e s user %U s sys %S s maxrss %M kB" "$@" > $OUT/e/$name.log 2>&1; echo "$name rc=$? $(tail -1 $OUT/e/$name.log)" | tee -a $S; }
t generate $X -q generate --output $D --grid 1440x721 --years 1982-2022 --doys 1-366 --storage i16
# issue 29's flags as main has them (9c71b72)
t climatology $X -q run --input $D --output $W/clim --years 1983-2012 --calendar hobday366 --percentile 10,90 \
  --method 7 --window-edges extend --feb29 interpolate --smooth 31 --layout climatology
for r in 1 2; do
  t read-floor-$r $X bench-read --input $D --years 1982-2022 --doys 1-366 --half-window 0 --repeats 1
  t events-heat-$r $X events --input $D --output $W/ev --years 1982-2022 --climatology $W/clim/climatology.nc --overwrite
  t events-cold-$r $X events --input $D --output $W/ev --years 1982-2022 --climatology $W/clim/climatology.nc --overwrite --cold
done
ls -la $W/ev >> $S
cp .carry/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r-events.tgz e && rm -rf e
