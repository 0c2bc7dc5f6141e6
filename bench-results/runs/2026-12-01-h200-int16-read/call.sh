: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Int16 files into an int16 pool copied as they are (no per-value decoding: the pool's table
# decodes), and packings with a valid range decoded branch-free: sstclim (new) against
# sstclim-old (the previous commit, same kernels), alternating, end to end on a generated
# full-size int16 dataset (OSTIA-like: scale, offset, _FillValue, valid_min/valid_max).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/p
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
W=$SCRATCH/sstclim-bench; D=$W/d16
$S -q generate --output $D --years 1991-2020 --doys 147-248 --storage i16 > $OUT/p/generate.txt 2>&1
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 3 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; bin=$2; be=$3; shift 3; rm -rf $W/$name; t0=$(now); .carry/$bin run "${JOB[@]}" "$@" --output $W/$name --backend $be --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; rc=$?; t1=$(now); echo "$name rc=$rc $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}') read $(python3 -c "import json; print(round(json.load(open('$OUT/p/$name.json'))['stage_seconds']['read'],3))")" | tee -a $OUT/p/e2e.txt; }
run warm sstclim cuda --rates none; rm -rf $W/warm
for i in 1 2 3 4; do
  run old-$i sstclim-old cuda --rates none; [ $i = 4 ] || rm -rf $W/old-$i
  run new-$i sstclim cuda --rates none; [ $i = 4 ] || rm -rf $W/new-$i
done
run trace-new sstclim cuda --rates none --trace-json $OUT/p/trace-new.json; rm -rf $W/trace-new
run trace-old sstclim-old cuda --rates none --trace-json $OUT/p/trace-old.json; rm -rf $W/trace-old
run cpu-i16 sstclim cpu --rates none --pool i16
$S compare $W/new-4 $W/cpu-i16 --tolerance 0 > $OUT/p/compare-new-cpu.txt 2>&1 && echo "new-4 (cuda) = cpu (i16 pool, new binary) bitwise" | tee -a $OUT/p/e2e.txt
$S compare $W/new-4 $W/old-4 --tolerance 0 > $OUT/p/compare-new-old.txt 2>&1 && echo "new-4 = old-4 bitwise" | tee -a $OUT/p/e2e.txt
cat $OUT/p/e2e.txt $OUT/p/read-floor.txt > $OUT/summary.txt
gzip $OUT/p/trace-*.json
cp .carry/call.sh $OUT/
cd $OUT && tar czf p.tgz p && rm -rf p
