: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 26's end-to-end target on the H200 (stop 37): the full-year job
# (`run --years 1991-2020 --doys 1-366 --percentile 10,90`) on the deflated dataset (deflate 4 +
# shuffle, chunks 361x720) against the same job on contiguous copies, alternating x2, outputs on
# the node's disk, then `sstclim compare --tolerance 0` of the two jobs' outputs.
# Usage: bash bench-results/runs/2026-12-02-h200-read-s37/call5.sh   (carry [".carry"])
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/r5 S=$OUT/summary5.txt
mkdir -p $W
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
GEN=(--grid 1440x721 --years 1991-2020 --storage i16 --doys 1-366)
t0=$(now); $X --quiet generate --output $W/z "${GEN[@]}" --deflate 4 --shuffle --chunks 361x720 > /dev/null 2>&1; echo "generate deflated rc=$? $(el $t0) s" | tee -a $S
t0=$(now); $X --quiet generate --output $W/c "${GEN[@]}" > /dev/null 2>&1; echo "generate contiguous rc=$? $(el $t0) s" | tee -a $S
t0=$(now); sync; echo "sync $(el $t0) s" | tee -a $S
FY=(--years 1991-2020 --doys 1-366 --percentile 10,90)
job() { name=$1 d=$2; t0=$(now); $X --quiet run --input $W/$d --output $W/o-$name --overwrite --timing-json $W/$name.json "${FY[@]}" > $W/$name.log 2>&1; echo "$name rc=$? wall $(el $t0) s: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r["stage_seconds"]; print("read %.2f write %.2f wall_seconds %.2f direct %d" % (s["read"], s["write"], r["wall_seconds"], r["files_direct"]))' $W/$name.json)" | tee -a $S; }
job z-1 z; rm -rf $W/o-z-1; job c-1 c; rm -rf $W/o-c-1
job z-2 z; job c-2 c   # (disk: 7.8 + 22.8 GB of inputs and two 9.1 GB output sets)
$X compare $W/o-z-2 $W/o-c-2 --tolerance 0 > $W/compare.txt 2>&1; echo "compare deflated vs contiguous outputs rc=$?: $(tail -1 $W/compare.txt)" | tee -a $S
