: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 26 point 4 (stop 37): does the reader-process fallback scale with --readers now?
# The 92-day reference job (1991-2020, days 152-243, h = 5, P90, --segments 1) on deflated
# int16 1440x721 files (deflate 4 + shuffle, 4 chunks of 361x720), every file read through
# libnetcdf: --read-path forked --readers 16, 4, 1 and --read-path library (one in-process
# reader), each cut at its own time limit so the script stays under 200 s. Stop 36 measured
# 16 readers no faster than one (35.6 s against 35.0 s, tree CPU 91 s against 40 s) with
# pin_seconds 10.5 s and pin-results 9.4 s; the s37 change keeps the (GPU-pinned) result
# buffers out of forked children (MADV_DONTFORK): Linux copies every DMA-pinned private page
# at each fork.
# Each line of the summary: the process tree's wall and CPU seconds (children included), the
# read stage, the parent's forks (count, seconds, longest), the children's per-file split from
# the run report's span_totals (child-file wall and CPU, child-open = nc_open + checks,
# child-read = nc_get_vara, child-decode = into the pool; busy = child-file / (readers x
# read stage)), the device set-up's pin and pin-results, and processes alive at once.
# Data: reuses $SCRATCH/r36/z (stop 36's full-year deflated set) when present, else generates the
# 92-day window (days 147-248, 3,060 files) into $SCRATCH/r37fb/z.
# Expects .carry/bins.tar.xz holding the stripped static binary `sstclim` (features
# netcdf-static,bench), like ../2026-12-02-h200-read-s36/call.sh.
# (X=BINARY GRID=360x181 YEARS=2001-2002: a smoke test off the node)
# Usage (device tool, from the repository root):
#   bash bench-results/runs/2026-12-02-h200-fallback-s37/call.sh
# Results: $OUT/summary-fallback.txt, $OUT/machine-fallback.txt, $OUT/r-fallback-s37.tgz.
set -u
R=$SCRATCH/r37fbres
if [ "${INNER:-}" != 1 ]; then
  mkdir -p $R
  INNER=1 timeout ${LIMIT:-195} bash $0; echo "measurements rc=$? (124: cut at the time limit)" | tee -a $OUT/summary-fallback.txt
  cp $0 $OUT/call-fallback.sh 2>/dev/null
  (cd $R && tar czf $OUT/r-fallback-s37.tgz .)
  exit 0
fi
[ -n "${X:-}" ] || [ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
[ -f scripts/bench/cuda-env.sh ] && . scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=${X:-$PWD/.carry/sstclim} Y=${YEARS:-1991-2020}
S=$OUT/summary-fallback.txt
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
{ date -u; uname -a; nproc; free -g; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine-fallback.txt 2>&1
if [ -z "${GRID:-}" ] && [ -d $SCRATCH/r36/z ] && [ "$(ls $SCRATCH/r36/z | wc -l)" -ge 10958 ]; then
  D=$SCRATCH/r36/z; echo "data: reusing $D ($(ls $D | wc -l) files)" | tee -a $S
else
  D=$SCRATCH/r37fb/z; mkdir -p $SCRATCH/r37fb
  if [ "$(ls $D 2>/dev/null | wc -l)" -lt 10 ]; then
    t0=$(now); $X --quiet generate --output $D --grid ${GRID:-1440x721} --years $Y --storage i16 --doys 147-248 --deflate 4 --shuffle --chunks 361x720 > $R/gen.log 2>&1
    echo "generate 92-day window deflated rc=$? $(el $t0) s, $(du -sh $D | cut -f1)" | tee -a $S
  fi
fi
J=(--years $Y --doys 152-243 --half-window 5 --percentile 90 --segments 1)
# one line of a run report; $2: reader processes (for the children's busy share)
summ() { python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1])); s=r["stage_seconds"]; t=r.get("span_totals",{}); n=int(sys.argv[2])
    g=lambda k,f="seconds": (t.get(k,{}).get(f) or 0.0); c=lambda k: t.get(k,{}).get("count",0)
    busy=g("child-file")/(n*s["read"]) if n and s["read"] else 0
    print("read %.2f write %.2f | fork %d %.2f s | child-file %d %.2f s cpu %.2f (busy %.0f%%) open %.2f read %.2f decode %.2f | pin %.2f pin-results %.2f pin_seconds %.2f | library %d" % (
      s["read"], s["write"], c("fork"), g("fork"), c("child-file"), g("child-file"), g("child-file","cpu_seconds"), 100*busy,
      g("child-open"), g("child-read"), g("child-decode"), g("pin"), g("pin-results"), r["pin_seconds"], r["files_library"]))
except Exception as e: print("no report", e)' "$1" "$2" 2>&1; }
# the longest fork, from the trace
longest() { python3 -c 'import json,sys
try: print("%.3f" % max([s["end"]-s["start"] for s in json.load(open(sys.argv[1]))["spans"] if s["stage"]=="fork"] or [0]))
except Exception as e: print("-")' "$1"; }
cpu() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
r=resource.getrusage(resource.RUSAGE_CHILDREN); print("wall %.2f cpu %.2f" % (time.time()-t, r.ru_utime+r.ru_stime))' "$@"; }
count() { ( while sleep 0.1; do echo "$(pgrep -c -f "$X --quiet run")"; done ) > $R/procs-$1.txt & CP=$!; }
fb() { name=$1 cap=$2 n=$3; shift 3; count $name
  t=$(cpu timeout $cap $X --quiet run --input $D "${J[@]}" --output $SCRATCH/r37fb/o-$name --timing-json $R/$name.json --trace-json $R/$name.trace.json "$@" 2> $R/$name.log)
  kill $CP; echo "$name (cap $cap s): $t; $(summ $R/$name.json $n); longest fork $(longest $R/$name.trace.json) s; max-procs $(sort -n $R/procs-$name.txt | tail -1)" | tee -a $S
  rm -rf $SCRATCH/r37fb/o-$name; }
fb forked16 40 16 --read-path forked --readers 16
fb forked4 30 4 --read-path forked --readers 4
fb library 45 0 --read-path library
fb forked1 45 1 --read-path forked --readers 1
