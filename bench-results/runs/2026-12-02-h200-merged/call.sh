: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issues 28, 29 and 30 on the H200 node with the merged tree, in two back-to-back calls that
# share one generated dataset (the node keeps $SCRATCH while it stays warm):
#   call.sh a   generate 1440x721 int16 OSTIA-like, 1982-2022, days 1-366 (if absent);
#               issue 29: the full-year job (1991-2020, hobday366, P90, method 7, stacked
#               into /dev/shm) plain against --smooth 31, alternated, twice, and
#               marineHeatWaves' whole climatology (extend, Feb 29 interpolated, smooth 31);
#               issue 30: the 1983-2012 climatology file, then `sstclim events` 1982-2022 for
#               heat and cold against bench-read of the same files (the pread floor), twice
#   call.sh b   issue 28: bench-results/runs/2026-12-02-h200-outputs/call.sh jobs (f64, f32,
#               f32 --deflate 1 with write floors); call.sh c: its errors part (f32, i16 vs f64);
#   call.sh d   the stored types' errors on the reference job (1440x721, 92 days): f32 and i16
#               against f64
# Expects .carry/bins.tar.xz holding the stripped static binary as sstclim (features
# netcdf-static,bench,test-hooks). Results under $OUT as one tar per part.
set -u
part=${1:-a}
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/m D=$SCRATCH/m/data
mkdir -p $OUT/j $W
S=$OUT/summary-$part.txt
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH /dev/shm; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine-$part.txt 2>&1
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
# part a needs 1982-2022 (events; 1990 and 2021 for the extended windows); b and c only the
# years of the outputs' job, 1991-2020 (the node's 64 GB disk holds the data and its outputs)
years=1982-2022; [ $part != a ] && years=1991-2020
if [ $part != d ] && [ ! -f $D/.done ]; then
  t0=$(now); $X --quiet generate --output $D --grid 1440x721 --storage i16 --years $years --doys 1-366 && touch $D/.done
  echo "generate i16 1440x721 $years days 1-366: $(since $t0) s, $(du -sh $D | cut -f1)" | tee -a $S
fi
if [ $part = a ]; then
  job=(--input $D --years 1991-2020 --doys 1-366 --calendar hobday366 --half-window 5 --percentile 90 --method 7
       --backend cuda --layout stacked --overwrite)
  hob() { # name repeat flags...
    local v=$1 r=$2; shift 2
    t0=$(now)
    $X --quiet run "${job[@]}" "$@" --output /dev/shm/hob-$v --timing-json $OUT/j/hob-$v-$r.json > $OUT/j/hob-$v-$r.log 2>&1
    echo "hobday $v $r rc=$? wall $(since $t0) s (write stage $(python3 -c "import json;print(round(json.load(open('$OUT/j/hob-$v-$r.json'))['stage_seconds']['write'],2))" 2>/dev/null) s)" | tee -a $S
  }
  for r in 1 2 3; do hob plain $r; hob smooth31 $r --smooth 31; done
  hob mhw 1 --window-edges extend --feb29 interpolate --smooth 31
  hob smooth31-seg1 1 --smooth 31 --segments 1
  $X compare /dev/shm/hob-smooth31 /dev/shm/hob-smooth31-seg1 --tolerance 0 > $OUT/j/hob-compare-segments.txt 2>&1
  echo "hobday compare smooth31 default segments / --segments 1: rc=$? $(tail -1 $OUT/j/hob-compare-segments.txt)" | tee -a $S
  rm -rf /dev/shm/hob-*
  # wall, CPU and peak RSS of one command (GNU time where the node has it, else wall only)
  t() {
    local name=$1; shift; t0=$(now)
    if [ -x /usr/bin/time ]; then /usr/bin/time -f "$name wall %e s user %U s sys %S s maxrss %M kB" "$@" > $OUT/j/ev-$name.log 2>&1
    else "$@" > $OUT/j/ev-$name.log 2>&1; fi
    echo "events $name rc=$? wall $(since $t0) s | $(tail -1 $OUT/j/ev-$name.log)" | tee -a $S
  }
  t climatology $X -q run --input $D --output $W/clim --years 1983-2012 --calendar hobday366 --percentile 10,90 \
    --method 7 --window-edges extend --feb29 interpolate --smooth 31 --layout climatology --overwrite
  for r in 1 2; do
    t read-floor-$r $X bench-read --input $D --years 1982-2022 --doys 1-366 --half-window 0 --repeats 1
    t heat-$r $X events --input $D --output $W/ev --years 1982-2022 --climatology $W/clim/climatology.nc --overwrite
    t cold-$r $X events --input $D --output $W/ev --years 1982-2022 --climatology $W/clim/climatology.nc --overwrite --cold
  done
  ls -la $W/ev >> $S
  rm -rf $W/ev $W/clim
fi
if [ $part = b ] || [ $part = c ]; then
  # issue 28's script on the same data ($W/data: the years it asks for are there)
  p=jobs; [ $part = c ] && p=errors
  W=$W bash bench-results/runs/2026-12-02-h200-outputs/call.sh $p
  [ $part = b ] && rm -rf $W/floor
fi
if [ $part = d ]; then
  # the stored types' error against float64 on the full-size grid, the reference job's days
  # (92 target days, 1991-2020): f32, and i16 with scale 0.001 around 290 K
  R=$SCRATCH/ref; t0=$(now)
  $X --quiet generate --output $R --grid 1440x721 --storage i16 --years 1991-2020 --doys 147-248
  echo "generate reference-size i16: $(since $t0) s" | tee -a $S
  ref=(--input $R --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90)
  for f in "f64" "f32 --output-type f32" "i16 --output-type i16 --output-scale 0.001 --output-offset 290"; do
    set -- $f; n=$1; shift
    $X --quiet run "${ref[@]}" "$@" --output /dev/shm/ref-$n > $OUT/j/ref-$n.log 2>&1; echo "ref $n rc=$?" | tee -a $S
  done
  for n in f32 i16; do
    $X compare /dev/shm/ref-f64 /dev/shm/ref-$n --tolerance 1 > $OUT/j/ref-compare-$n.txt 2>&1
    echo "compare f64 $n rc=$? $(tail -2 $OUT/j/ref-compare-$n.txt | tr '\n' ' ')" | tee -a $S
  done
fi
cp .carry/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r-$part.tgz j && rm -rf j
