: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 26 on the H200 node, one call: the full-year deflated OSTIA-like dataset (1440x721
# int16, deflate 4 + shuffle, 4 chunks of 361x720, 1991-2020, days 1-366 = 10,958 files)
# generated here with sstclim's own tool, and its contiguous copy; then, warm page cache:
#  - the first GPU run of the node (first-run pinning of the staging rows, point 7);
#  - bench-read plain and --inflate (the parallel-inflate floor) on the deflated files;
#  - the read stage (--segments 1) of the full-year job, deflated then contiguous;
#  - `run --doys 1-366 --percentile 10,90` end to end, deflated vs contiguous, alternating;
#  - the 92-day reference job (days 152-243, h = 5, P90) deflated vs contiguous, alternating;
#  - the reader-process fallback (point 4): --read-path forked with 1, 4, 16 readers and
#    --read-path library (one libnetcdf reader) on the 92-day job, with the children counted
#    every 0.1 s and Dirty/Writeback pages logged, before and after `sync`;
#  - outputs of the deflated and contiguous full-year jobs compared bitwise.
# Usage (device tool, from the main checkout, carry .carry/in26 holding this script and
# bins.tar.xz: the stripped static sstclim, the inflate-compare tool and 4 stored chunks):
#   bash .carry/in26/call.sh        (results: $OUT/summary.txt, $OUT/r.tgz)
set -u
C=${C:-.carry/in26}
# the measurements run under a time limit, so that the results are packed (at most 8 files
# come back) even where the device call's limit would cut them short
if [ "${INNER:-}" != 1 ]; then
  INNER=1 timeout ${LIMIT:-545} bash $0; echo "measurements rc=$? (124: cut at the time limit)" >> $OUT/summary.txt
  cp $C/call.sh $OUT/ 2>/dev/null
  (cd $SCRATCH/r26res && tar czf $OUT/r.tgz .)
  exit 0
fi
[ -x $C/bin/sstclim ] || (cd $C && tar xJf bins.tar.xz)
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/$C/bin/sstclim W=$SCRATCH/r26 R=$SCRATCH/r26res
mkdir -p $R $W
S=$OUT/summary.txt
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
# one line of a run report: stage seconds, wall, pinning, files and bytes
summ() { python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1])); s=r["stage_seconds"]
    print("read %.3f compute %.3f h2d %.3f write %.3f wall %.3f pin %.3f direct %d library %d stored %.3fGB inflated %.3fGB" % (s["read"], s["compute"], s["h2d"], s["write"], r["wall_seconds"], r["pin_seconds"], r["files_direct"], r["files_library"], r["bytes_read"]/1e9, r.get("bytes_decompressed",0)/1e9))
except Exception as e: print("no report", e)' "$1" 2>&1; }
mem() { echo "$1: $(grep -E '^(Dirty|Writeback|Cached):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')" >> $R/meminfo.txt; }
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine.txt 2>&1
GEN=(--grid 1440x721 --years 1991-2020 --doys 1-366 --storage i16)
# the inflaters on one core of the node: the 4 stored chunks of one generated file
$C/bin/inflate-compare 519840 101 $C/chunks/chunk*.z > $R/inflate-compare.txt 2>&1
echo "inflate-compare: $(tr '\n' ' ' < $R/inflate-compare.txt)" | tee -a $S
# (point 7) the node's first GPU run: a small job, so the pinning of the staging rows is the
# first one of this process tree
$X --quiet generate --output $W/tiny --grid 1440x721 --years 2001-2002 --doys 100-110 --storage i16 > /dev/null 2>&1
$X --quiet run --input $W/tiny --years 2001-2002 --doys 103-107 --half-window 3 --output $W/o-tiny1 --timing-json $R/first-run-1.json > $R/first-run-1.log 2>&1
$X --quiet run --input $W/tiny --years 2001-2002 --doys 103-107 --half-window 3 --output $W/o-tiny2 --timing-json $R/first-run-2.json > $R/first-run-2.log 2>&1
echo "first GPU run: $(summ $R/first-run-1.json); second: $(summ $R/first-run-2.json)" | tee -a $S
mem before-generate
t0=$(now); $X --quiet generate --output $W/z "${GEN[@]}" --deflate 4 --shuffle --chunks 361x720 > $R/gen-z.log 2>&1
echo "generate deflated rc=$? $(el $t0) s, $(du -sh $W/z | cut -f1)" | tee -a $S
mem after-generate-z
t0=$(now); $X --quiet generate --output $W/c "${GEN[@]}" > $R/gen-c.log 2>&1
echo "generate contiguous rc=$? $(el $t0) s, $(du -sh $W/c | cut -f1)" | tee -a $S
mem after-generate-c
# (point 4) one fallback run right after writing (dirty pages); the rest at the end
# (point 4) the fallback right after writing (dirty pages), then after sync
# (forked children keep the parent's command line but take the name of the thread that forked
# them: count by command line, not by name)
count() { ( while sleep 0.1; do echo "$(date +%s.%N) $(pgrep -c -f "$X run")"; done ) > $R/children-$1.txt & CP=$!; }
J92=(--years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --segments 1)
fb() { name=$1; shift; count $name; t0=$(now); timeout 45 $X --quiet run --input $W/z "${J92[@]}" --output $W/o-$name --timing-json $R/fb-$name.json "$@" > $R/fb-$name.log 2>&1; rc=$?; kill $CP; echo "fallback $name rc=$rc wall $(el $t0) s: $(summ $R/fb-$name.json); max-procs $(sort -k2 -n $R/children-$name.txt | tail -1 | cut -d' ' -f2)" | tee -a $S; rm -rf $W/o-$name; }
fb forked16-dirty --read-path forked --readers 16
sync; mem after-sync
# the parallel-inflate floor and the plain read floor (deflated files), warm
$X bench-read --input $W/z --years 1991-2020 --doys 1-366 --half-window 0 --inflate --repeats 3 --json $R/floor-inflate.json > $R/floor-inflate.log 2>&1
echo "bench-read --inflate: $(grep 'inflate floor' $R/floor-inflate.log)" | tee -a $S
$X bench-read --input $W/z --years 1991-2020 --doys 1-366 --half-window 0 --repeats 3 --json $R/floor-read-z.json > $R/floor-read-z.log 2>&1
echo "bench-read deflated files: $(grep 'read floor' $R/floor-read-z.log)" | tee -a $S
$X bench-read --input $W/c --years 1991-2020 --doys 1-366 --half-window 0 --repeats 3 --json $R/floor-read-c.json > $R/floor-read-c.log 2>&1
echo "bench-read contiguous files: $(grep 'read floor' $R/floor-read-c.log)" | tee -a $S
# jobs, alternating deflated (z) and contiguous (c)
job() { name=$1 d=$2; shift 2; t0=$(now); timeout 90 $X --quiet run --input $W/$d --output $W/o-$name --timing-json $R/$name.json "$@" > $R/$name.log 2>&1; rc=$?; echo "$name rc=$rc wall $(el $t0) s: $(summ $R/$name.json)" | tee -a $S; }
FY=(--years 1991-2020 --doys 1-366 --percentile 10,90)
job readstage-z-1 z "${FY[@]}" --segments 1; job readstage-c-1 c "${FY[@]}" --segments 1
rm -rf $W/o-readstage-*
for r in 1 2; do
  job year-z-$r z "${FY[@]}"; job year-c-$r c "${FY[@]}"
  [ $r = 1 ] && { $X compare $W/o-year-z-1 $W/o-year-c-1 --tolerance 0 > $R/compare-year.txt 2>&1; echo "compare year deflated/contiguous rc=$? $(tail -1 $R/compare-year.txt)" | tee -a $S; }
  rm -rf $W/o-year-z-$r $W/o-year-c-$r
done
J=(--years 1991-2020 --doys 152-243 --half-window 5 --percentile 90)
for r in 1 2 3; do job ref-z-$r z "${J[@]}"; job ref-c-$r c "${J[@]}"; rm -rf $W/o-ref-*; done
# (point 4) the fallback after sync, by readers, and one libnetcdf reader in one process
fb forked16 --read-path forked --readers 16
fb forked4 --read-path forked --readers 4
fb library --read-path library
fb forked1 --read-path forked --readers 1
