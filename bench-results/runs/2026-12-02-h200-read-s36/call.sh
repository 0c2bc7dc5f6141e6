# Issue 26 points 7, 5/perf and 4 on a FRESHLY STARTED H200 node (branch s36-h26 merged): the
# full-year OSTIA-like dataset (1440x721 int16, deflate 4 + shuffle, 4 chunks of 361x720,
# 1991-2020, days 1-366 = 10,958 files) generated here with sstclim's own tool, then:
#  1. (point 7) the node's FIRST GPU run, full size: `run --doys 1-366 --percentile 10,90
#     --segments 1` with --trace-json; the summary splits its set-up from the run report's
#     span_totals: device-start, stage-rows (staging rows, now page-locked memory from
#     cuMemHostAlloc), prepare (kernel compile; the kernel cache is empty on a fresh node),
#     result-buffers (committing them), pin-results, and pin_seconds (the set-up thread's time);
#  2. bench-read --inflate (the parallel-inflate floor) x3 passes, twice;
#  3. the full-year job's read stage (--segments 1), default x2 alternating with variants that
#     test where the time over the floor goes: SSTCLIM_READER_NICE=5 (the upload thread and
#     set-up first), --threads 15 (a core left to them), SSTCLIM_STAGING_ROWS=8; once with
#     SSTCLIM_STAGING_PIN=register (the old staging rows, warm) and once with default segments;
#     each line gives the readers' busy and CPU seconds, waits for staging rows and uploads;
#  4. the 92-day reference job (days 152-243, h = 5, P90) deflated vs contiguous, alternating x3
#     (only the 92-day window, days 147-248, is generated contiguous: 3,060 files);
#  5. (point 4) the reader-process fallback on the 92-day job (--read-path forked --readers 16
#     and 4, --read-path library), each cut at 40 s: the process tree's CPU seconds (children
#     included), children counted every 0.1 s, `vmstat 1` beside it.
# Expects .carry/bins.tar.xz holding the stripped static binary `sstclim` (features
# netcdf-static,bench), like ../2026-12-02-h200-events2/call.sh.
# (X=BINARY GRID=360x181 YEARS=2001-2002: a smoke test off the node)
# Usage (device tool, from the repository root, on a fresh node: nothing before it):
#   bash bench-results/runs/2026-12-02-h200-read-s36/call.sh
# Results: $OUT/summary.txt, $OUT/machine.txt, $OUT/r-read-s36.tgz (reports, traces, logs).
set -u
R=/tmp/r36res
if [ "${INNER:-}" != 1 ]; then
  mkdir -p $R
  INNER=1 timeout ${LIMIT:-550} bash $0; echo "measurements rc=$? (124: cut at the time limit)" | tee -a $OUT/summary.txt
  cp $0 $OUT/call.sh 2>/dev/null
  (cd $R && tar czf $OUT/r-read-s36.tgz .)
  exit 0
fi
[ -n "${X:-}" ] || [ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=${X:-$PWD/.carry/sstclim} W=/tmp/r36 Y=${YEARS:-1991-2020}
mkdir -p $W
S=$OUT/summary.txt
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
{ date -u; uname -a; nproc; free -g; df -h /tmp; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; cat /sys/kernel/mm/transparent_hugepage/enabled; } > $OUT/machine.txt 2>&1
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
t0=$(now); $X --quiet generate --output $W/z "${GEN[@]}" --doys 1-366 --deflate 4 --shuffle --chunks 361x720 > $R/gen-z.log 2>&1
echo "generate deflated rc=$? $(el $t0) s, $(du -sh $W/z | cut -f1)" | tee -a $S
t0=$(now); sync; echo "sync $(el $t0) s" | tee -a $S
FY=(--years $Y --doys 1-366 --percentile 10,90)
job() { name=$1 d=$2; shift 2; t0=$(now); timeout 90 $X --quiet run --input $W/$d --output $W/o-$name --timing-json $R/$name.json "$@" > $R/$name.log 2>&1; rc=$?; echo "$name rc=$rc wall $(el $t0) s: $(summ $R/$name.json)" | tee -a $S; rm -rf $W/o-$name; }
# 1. the node's first GPU run (nothing ran on the device before it)
job first-year-seg1 z "${FY[@]}" --segments 1 --trace-json $R/first-year-seg1.trace.json
job second-year-seg1 z "${FY[@]}" --segments 1 --trace-json $R/second-year-seg1.trace.json
# 2. the floor
for r in 1 2; do
  $X bench-read --input $W/z --years $Y --doys 1-366 --half-window 0 --inflate --repeats 3 --json $R/floor-$r.json > $R/floor-$r.log 2>&1
  echo "bench-read --inflate $r: $(grep 'inflate floor' $R/floor-$r.log)" | tee -a $S
done
# 3. the read stage, default and variants, alternating
for r in 1 2; do
  job rs-default-$r z "${FY[@]}" --segments 1
  SSTCLIM_READER_NICE=5 job rs-nice5-$r z "${FY[@]}" --segments 1
  job rs-threads15-$r z "${FY[@]}" --segments 1 --threads 15
  SSTCLIM_STAGING_ROWS=8 job rs-rows8-$r z "${FY[@]}" --segments 1
done
SSTCLIM_STAGING_PIN=register job rs-register z "${FY[@]}" --segments 1
job year-default-segments z "${FY[@]}" --trace-json $R/year-default-segments.trace.json
# 4. the 92-day reference job, deflated vs contiguous (contiguous copy of its window only)
t0=$(now); $X --quiet generate --output $W/c "${GEN[@]}" --doys 147-248 > $R/gen-c.log 2>&1
echo "generate contiguous 92-day window rc=$? $(el $t0) s, $(du -sh $W/c | cut -f1)" | tee -a $S
sync
J=(--years $Y --doys 152-243 --half-window 5 --percentile 90)
for r in 1 2 3; do job ref-z-$r z "${J[@]}"; job ref-c-$r c "${J[@]}"; done
# 5. the reader-process fallback (point 4)
count() { ( while sleep 0.1; do echo "$(date +%s.%N) $(pgrep -c -f "$X --quiet run")"; done ) > $R/children-$1.txt & CP=$!; vmstat 1 > $R/vmstat-$1.txt 2>&1 & VP=$!; }
fb() { name=$1; shift; count $name; t=$(cpu timeout 40 $X --quiet run --input $W/z "${J[@]}" --segments 1 --output $W/o-$name --timing-json $R/fb-$name.json "$@" 2> $R/fb-$name.log); kill $CP $VP; echo "fallback $name: $t; $(summ $R/fb-$name.json); max-procs $(sort -k2 -n $R/children-$name.txt | tail -1 | cut -d' ' -f2)" | tee -a $S; rm -rf $W/o-$name; }
fb forked16 --read-path forked --readers 16
fb forked4 --read-path forked --readers 4
fb library --read-path library
