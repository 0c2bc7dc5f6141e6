: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 26, the 92-day reference job deflated vs contiguous, after call2.sh (whose variants did
# not move it): traces (--trace-json) of the deflated and the contiguous job, to see when the
# first segment is computed and written, and the deflated job with 32 segments, x2. Generates only the 92-day window (days 147-248) deflated and contiguous in $SCRATCH/r36n.
# Usage: bash bench-results/runs/2026-12-02-h200-read-s37/call3.sh   (carry [".carry"])
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/r36n R=$SCRATCH/r37res3 S=$OUT/summary3.txt
mkdir -p $W $R
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
summ() { python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); s=r["stage_seconds"]; t=r.get("span_totals",{}); w=r["wall_shares"]
g=lambda k,f="seconds": (t.get(k,{}).get(f) or 0.0)
print("read %.3f write %.3f wall %.3f | readers cpu %.2f | write alone %.3f read+write %.3f other %.3f" % (s["read"], s["write"], r["wall_seconds"], g("read","cpu_seconds"), w["alone"]["write"], w["overlapped"].get("read/decode+write",0), w["other"]))' "$1" 2>&1; }
GEN=(--grid 1440x721 --years 1991-2020 --storage i16 --doys 147-248)
t0=$(now); $X --quiet generate --output $W/z "${GEN[@]}" --deflate 4 --shuffle --chunks 361x720 > $R/gen-z.log 2>&1
echo "generate deflated 92-day window rc=$? $(el $t0) s" | tee -a $S
t0=$(now); $X --quiet generate --output $W/c "${GEN[@]}" > $R/gen-c.log 2>&1
echo "generate contiguous rc=$? $(el $t0) s" | tee -a $S; sync
J=(--years 1991-2020 --doys 152-243 --half-window 5 --percentile 90)
job() { name=$1 d=$2; shift 2; t0=$(now); $X --quiet run --input $W/$d --output $W/o-$name --timing-json $R/$name.json "${J[@]}" "$@" > $R/$name.log 2>&1; echo "$name rc=$? wall $(el $t0) s: $(summ $R/$name.json)" | tee -a $S; rm -rf $W/o-$name; }
job warmup c
for r in 1 2; do
  job z-$r z --trace-json $R/tr-z-$r.json
  job c-$r c --trace-json $R/tr-c-$r.json
  job z-seg32-$r z --segments 32
done
(cd $R && tar czf $OUT/r-read3-s37.tgz .)
