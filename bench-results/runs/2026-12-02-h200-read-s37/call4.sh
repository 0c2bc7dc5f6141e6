: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 26/28 (stop 37): the outputs' writeback started as each field is written
# (sync_file_range, the default now) against leaving it all to the final fsync
# (SSTCLIM_EARLY_WRITEBACK=off), alternating, outputs on the node's disk:
#  - the 92-day reference job (days 152-243, h = 5, P90, 1.53 GB of float64 outputs) on the
#    deflated files and on contiguous copies of its window, x3;
#  - the full-year job (--doys 1-366 --percentile 10,90, 9.1 GB of outputs) on the deflated files, x2.
# Data: the full-year deflated set in $SCRATCH/r36/z (as ../2026-12-02-h200-read-s36, made if missing;
# the fallback script reuses it) and the 92-day window contiguous in $SCRATCH/r36n/c.
# Usage: bash bench-results/runs/2026-12-02-h200-read-s37/call4.sh   (carry [".carry"])
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/r36 R=$SCRATCH/r37res4 S=$OUT/summary4.txt
mkdir -p $W $SCRATCH/r36n $R
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
summ() { python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); s=r["stage_seconds"]; t=r.get("span_totals",{})
g=lambda k,f="seconds": (t.get(k,{}).get(f) or 0.0)
print("read %.3f write %.3f wall %.3f | write spans %.3f sync-outputs %.3f create %.3f" % (s["read"], s["write"], r["wall_seconds"], g("write"), g("sync-outputs"), g("create-outputs")))' "$1" 2>&1; }
GEN=(--grid 1440x721 --years 1991-2020 --storage i16)
if [ ! -f $W/z/.done ]; then
  t0=$(now); $X --quiet generate --output $W/z "${GEN[@]}" --doys 1-366 --deflate 4 --shuffle --chunks 361x720 > $R/gen-z.log 2>&1 && touch $W/z/.done
  echo "generate deflated full year rc=$? $(el $t0) s" | tee -a $S
fi
if [ ! -f $SCRATCH/r36n/c/.done ]; then
  t0=$(now); $X --quiet generate --output $SCRATCH/r36n/c "${GEN[@]}" --doys 147-248 > $R/gen-c.log 2>&1 && touch $SCRATCH/r36n/c/.done
  echo "generate contiguous 92-day window rc=$? $(el $t0) s" | tee -a $S
fi
t0=$(now); sync; echo "sync $(el $t0) s" | tee -a $S
J=(--years 1991-2020 --doys 152-243 --half-window 5 --percentile 90)
FY=(--years 1991-2020 --doys 1-366 --percentile 10,90)
job() { name=$1 d=$2; shift 2; t0=$(now); $X --quiet run --input $d --output $SCRATCH/o-$name --timing-json $R/$name.json "$@" > $R/$name.log 2>&1; echo "$name rc=$? wall $(el $t0) s: $(summ $R/$name.json)" | tee -a $S; rm -rf $SCRATCH/o-$name; }
job warmup $SCRATCH/r36n/c "${J[@]}"
for r in 1 2 3; do
  job z-on-$r $W/z "${J[@]}"
  SSTCLIM_EARLY_WRITEBACK=off job z-off-$r $W/z "${J[@]}"
  job c-on-$r $SCRATCH/r36n/c "${J[@]}"
  SSTCLIM_EARLY_WRITEBACK=off job c-off-$r $SCRATCH/r36n/c "${J[@]}"
done
for r in 1 2; do
  job year-on-$r $W/z "${FY[@]}"
  SSTCLIM_EARLY_WRITEBACK=off job year-off-$r $W/z "${FY[@]}"
done
(cd $R && tar czf $OUT/r-read4-s37.tgz .)
