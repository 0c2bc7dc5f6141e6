: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 26 on the H200 after stop 37's change to the chunked read (int16 chunks unshuffled straight
# into the pool's rows, float pools' chunks unshuffled straight into the band: one or two passes
# over every chunk fewer). Same data as ../2026-12-02-h200-read-s36 (1440x721 int16, deflate 4 +
# shuffle, chunks 361x720, 1991-2020, days 1-366 = 10,958 files, in $SCRATCH/r36/z, kept if there), then:
#  1. bench-read --inflate (the parallel-inflate floor) x3 passes, twice;
#  2. the full-year job (`--doys 1-366 --percentile 10,90`), default segments x3 and
#     --segments 1 x2, alternating: read stage against the floor, readers' busy and CPU seconds;
#  3. the 92-day reference job (days 152-243, h = 5, P90) deflated vs contiguous, alternating x3.
# Expects .carry/bins.tar.xz holding the stripped static binary `sstclim`.
# Usage (device tool, from the repository root):
#   bash bench-results/runs/2026-12-02-h200-read-s37/call.sh
# Results: $OUT/summary.txt, $OUT/machine.txt, $OUT/r-read-s37.tgz (reports, logs).
set -u
R=$SCRATCH/r37res
if [ "${INNER:-}" != 1 ]; then
  mkdir -p $R
  INNER=1 timeout ${LIMIT:-330} bash $0; echo "measurements rc=$? (124: cut at the time limit)" | tee -a $OUT/summary.txt
  cp $0 $OUT/call.sh 2>/dev/null
  (cd $R && tar czf $OUT/r-read-s37.tgz .)
  exit 0
fi
[ -n "${X:-}" ] || [ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=${X:-$PWD/.carry/sstclim} W=$SCRATCH/r36 Y=${YEARS:-1991-2020}
mkdir -p $W
S=$OUT/summary.txt
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; cat /sys/kernel/mm/transparent_hugepage/enabled; } > $OUT/machine.txt 2>&1
# one line of a run report: stages, set-up split and the readers' split (span_totals)
summ() { python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1])); s=r["stage_seconds"]; t=r.get("span_totals",{})
    g=lambda k,f="seconds": (t.get(k,{}).get(f) or 0.0)
    print("read %.3f compute %.3f write %.3f wall %.3f | setup: pin_seconds %.3f device-start %.3f stage-rows %.3f prepare %.3f result-buffers %.3f pin-results %.3f | readers: busy %.2f cpu %.2f locate %.2f/%.2f wait-row %.3f (%d) upload %.3f (%d) | direct %d library %d stored %.2fGB inflated %.2fGB" % (
      s["read"], s["compute"], s["write"], r["wall_seconds"], r["pin_seconds"], g("device-start"), g("stage-rows"), g("prepare"), g("result-buffers"), g("pin-results"),
      g("read"), g("read","cpu_seconds"), g("locate"), g("locate","cpu_seconds"), g("wait-row"), t.get("wait-row",{}).get("count",0), g("upload"), t.get("upload",{}).get("count",0),
      r["files_direct"], r["files_library"], r["bytes_read"]/1e9, r.get("bytes_decompressed",0)/1e9))
except Exception as e: print("no report", e)' "$1" 2>&1; }
# run under a process-tree CPU clock: "wall W cpu C" (children included once waited for)
cpu() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
r=resource.getrusage(resource.RUSAGE_CHILDREN); print("wall %.2f cpu %.2f" % (time.time()-t, r.ru_utime+r.ru_stime))' "$@"; }
GEN=(--grid ${GRID:-1440x721} --years $Y --storage i16)
if [ ! -f $W/z/.done ]; then
  t0=$(now); $X --quiet generate --output $W/z "${GEN[@]}" --doys 1-366 --deflate 4 --shuffle --chunks 361x720 > $R/gen-z.log 2>&1 && touch $W/z/.done
  echo "generate deflated rc=$? $(el $t0) s, $(du -sh $W/z | cut -f1)" | tee -a $S
  t0=$(now); sync; echo "sync $(el $t0) s" | tee -a $S
fi
FY=(--years $Y --doys 1-366 --percentile 10,90)
job() { name=$1 d=$2; shift 2; t0=$(now); timeout 90 $X --quiet run --input $W/$d --output $W/o-$name --timing-json $R/$name.json "$@" > $R/$name.log 2>&1; rc=$?; echo "$name rc=$rc wall $(el $t0) s: $(summ $R/$name.json)" | tee -a $S; rm -rf $W/o-$name; }
# 1. the floor
for r in 1 2; do
  $X bench-read --input $W/z --years $Y --doys 1-366 --half-window 0 --inflate --repeats 3 --json $R/floor-$r.json > $R/floor-$r.log 2>&1
  echo "bench-read --inflate $r: $(grep 'inflate floor' $R/floor-$r.log)" | tee -a $S
done
# 2. the full-year job's read stage, alternating default segments and --segments 1
for r in 1 2; do
  job year-default-$r z "${FY[@]}"
  job year-seg1-$r z "${FY[@]}" --segments 1
done
job year-default-3 z "${FY[@]}"
# 3. the 92-day reference job, deflated vs contiguous (contiguous copy of its window only)
if [ ! -f $W/c/.done ]; then
  t0=$(now); $X --quiet generate --output $W/c "${GEN[@]}" --doys 147-248 > $R/gen-c.log 2>&1 && touch $W/c/.done
  echo "generate contiguous 92-day window rc=$? $(el $t0) s, $(du -sh $W/c | cut -f1)" | tee -a $S
  sync
fi
J=(--years $Y --doys 152-243 --half-window 5 --percentile 90)
for r in 1 2 3; do job ref-z-$r z "${J[@]}"; job ref-c-$r c "${J[@]}"; done
