# Device call: GPU start beside the pipeline (deferred), CUDA wait modes, segment counts.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/t $OUT/p
for t in pipeline-tests backends-tests; do
  timeout 200 .carry/$t --test-threads 4 > $OUT/t/$t.txt 2>&1; echo "$t rc=$?" | tee -a $OUT/t/summary.txt
  grep -E "test result|SKIP" $OUT/t/$t.txt | head -5 >> $OUT/t/summary.txt
done
S=.carry/sstclim; W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; e=$2; shift 2; t0=$(now); env $e $S -q run "${JOB[@]}" "$@" --output $W/$name --overwrite --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.err 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm SSTCLIM_DEFER_START=off
for i in 1 2 3 4; do
  run at-once-$i SSTCLIM_DEFER_START=off
  run deferred-$i SSTCLIM_DEFER_START=on
  run blocking-$i SSTCLIM_CUDA_SCHED=blocking
  run yield-$i SSTCLIM_CUDA_SCHED=yield
done
for r in 1 2 3 6 8 12; do run seg$r-1 SSTCLIM_X=1 --segments $r; run seg$r-2 SSTCLIM_X=1 --segments $r; done
$S compare $W/deferred-4 $W/at-once-4 --tolerance 0 > $OUT/p/compare.txt 2>&1 && echo "deferred-4 = at-once-4 bitwise" | tee -a $OUT/p/e2e.txt
cd $OUT && tar czf p.tgz p && rm -rf p
