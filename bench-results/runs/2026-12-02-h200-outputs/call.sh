# Issue 28 figures on the H200 node, full-year job (1440x721 int16 OSTIA-like input, 1991-2020,
# days 1-366, h = 5, mean + P10 + P90, per-doy: 1098 files), in parts that each fit one call
# (10 minutes):
#   call.sh gen    generate the input (int16, ~23 GB) under $W (kept between calls while the
#                  machine stays warm; the other parts run it first where it is missing)
#   call.sh jobs   the job's write stage, alternating per repeat: float64, float32, float32
#                  --deflate 1 (each form replacing its previous outputs with --overwrite, as a
#                  user's second run does; the first repeat writes into a fresh directory), and
#                  the write floor (bench-write-floor: the same files' bytes with pwrite +
#                  fsync, no HDF5) after each run; the replacing cost (fresh vs --overwrite)
#   call.sh errors float32 and int16 (--output-scale 0.001) outputs against float64
#                  (sstclim compare: max |a-b| per statistic)
# Targets (issue 28): f32 --deflate 1 write stage <= 1.2x f32's, bytes <= 40 % of f64's, and
# within 1.3x of its floor. Expects .carry/bins.tar.xz holding the stripped static sstclim
# built with --features netcdf-static,bench. Results under $OUT as one tar.
set -u
part=${1:-jobs}
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
B=$PWD/.carry/sstclim W=${W:-/tmp/o28}
mkdir -p $OUT/j $W
S=$OUT/summary-$part.txt
{ date -u; uname -a; nproc; free -g; df -h $W; nvidia-smi --query-gpu=name,driver_version --format=csv; $B --version; } > $OUT/machine.txt 2>&1
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
if [ ! -f $W/data/.done ]; then
  t0=$(now); $B --quiet generate --output $W/data --grid 1440x721 --years 1991-2020 --doys 1-366 --storage i16 && touch $W/data/.done
  echo "generate i16 1440x721 1991-2020 days 1-366: $(since $t0) s, $(du -sh $W/data | cut -f1)" | tee -a $S
fi
job=(--input $W/data --years 1991-2020 --doys 1-366 --half-window 5 --percentile 10,90 --calendar hobday366)
declare -A FORM=([f64]="" [f32]="--output-type f32" [f32-deflate1]="--output-type f32 --deflate 1" [i16]="--output-type i16 --output-scale 0.001 --output-offset 290")
run() { # form tag [extra]
  local f=$1 tag=$2; shift 2
  t0=$(now); $B --quiet run "${job[@]}" ${FORM[$f]} --output $W/out-$f --timing-json $OUT/j/$f-$tag.json "$@" > $OUT/j/$f-$tag.log 2>&1
  local rc=$?
  local ws=$(python3 -c "import json;print(round(json.load(open('$OUT/j/$f-$tag.json'))['stage_seconds']['write'],3))" 2>/dev/null)
  local mb=$(du -sm --apparent-size $W/out-$f | cut -f1)
  echo "$f $tag rc=$rc wall $(since $t0) s write-stage $ws s outputs $mb MB" | tee -a $S
}
floor() { # form tag (the previous floor's files removed first: the disk holds one copy)
  rm -rf $W/floor
  $B bench-write-floor --like $W/out-$1 --dir $W/floor --repeats 1 --json $OUT/j/floor-$1-$2.json > $OUT/j/floor-$1-$2.log 2>&1
  echo "floor $1 $2 rc=$? $(cat $OUT/j/floor-$1-$2.log)" | tee -a $S
}
if [ $part = jobs ]; then
  for f in f64 f32 f32-deflate1; do rm -rf $W/out-$f; done; sync
  for f in f64 f32 f32-deflate1; do run $f fresh; sync; floor $f fresh; done
  for r in 1 2 3; do
    for f in f64 f32 f32-deflate1; do run $f overwrite-$r --overwrite; sync; floor $f $r; done
  done
  python3 - $OUT/j <<'PY' | tee -a $S
import json, glob, os, sys
d = sys.argv[1]
def ws(f, t): return json.load(open(f"{d}/{f}-{t}.json"))["stage_seconds"]["write"]
def fl(f, t): return json.load(open(f"{d}/floor-{f}-{t}.json"))["median_seconds"]
def med(x): x = sorted(x); n = len(x); return x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2
tags = ["overwrite-1", "overwrite-2", "overwrite-3"]
m = {f: med([ws(f, t) for t in tags]) for f in ["f64", "f32", "f32-deflate1"]}
flo = {f: med([fl(f, t[-1]) for t in tags]) for f in m}
print("median write stage (replacing):", {f: round(v, 3) for f, v in m.items()}, "fresh:", {f: round(ws(f, "fresh"), 3) for f in m})
print("median floor:", {f: round(v, 3) for f, v in flo.items()})
print(f"f32-deflate1 / f32 write stage: {m['f32-deflate1'] / m['f32']:.2f} (target <= 1.2); per repeat",
      [round(ws('f32-deflate1', t) / ws('f32', t), 2) for t in tags])
print(f"f32-deflate1 / its floor: {m['f32-deflate1'] / flo['f32-deflate1']:.2f} (target <= 1.3)")
PY
  for f in f64 f32 f32-deflate1; do echo "bytes $f $(du -sb --apparent-size $W/out-$f | cut -f1)"; done | tee -a $S
fi
if [ $part = errors ]; then
  [ -d $W/out-f64 ] || run f64 for-errors
  [ -d $W/out-f32 ] || run f32 for-errors
  run i16 for-errors --overwrite
  for f in f32 i16; do
    timeout 250 $B compare $W/out-f64 $W/out-$f --tolerance 1 > $OUT/j/compare-f64-$f.txt 2>&1
    echo "compare f64 $f rc=$? $(tail -4 $OUT/j/compare-f64-$f.txt | tr '\n' ' ')" | tee -a $S
  done
fi
cp .carry/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r-$part.tgz j && rm -rf j
