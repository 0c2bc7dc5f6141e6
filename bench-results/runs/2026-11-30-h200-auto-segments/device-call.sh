: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Device call: segments chosen from measured rates (issue 5 item 4), GPU start beside the pipeline.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/t $OUT/p
for t in libtests pipeline-tests backends-tests; do
  timeout 240 .carry/$t --test-threads 4 > $OUT/t/$t.txt 2>&1; echo "$t rc=$?" | tee -a $OUT/t/summary.txt
  grep -E "test result|SKIP" $OUT/t/$t.txt | head -5 >> $OUT/t/summary.txt
done
S=.carry/sstclim; W=$SCRATCH/sstclim-bench; D=$W/data; R=$W/rates.json
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; rm -rf $W/$name; t0=$(now); $S run "${JOB[@]}" "$@" --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}') $(grep -o '"segments":[0-9]*' $OUT/p/$name.json)" | tee -a $OUT/p/e2e.txt; }
run warm --rates none; rm -rf $W/warm
run calib-1 --rates $R; rm -rf $W/calib-1
run calib-2 --rates $R; rm -rf $W/calib-2
for i in 1 2 3 4; do
  run fixed4-$i --rates none --segments 4; [ $i = 4 ] || rm -rf $W/fixed4-$i
  run auto-$i --rates $R; [ $i = 4 ] || rm -rf $W/auto-$i
done
for r in 8 12 16; do for i in 1 2; do run seg$r-$i --rates none --segments $r; rm -rf $W/seg$r-$i; done; done
run seq --rates none --segments 1 --gpu-pool host
cp $R $OUT/p/rates.json
for o in fixed4-4 seq; do $S compare $W/auto-4 $W/$o --tolerance 0 > $OUT/p/compare-$o.txt 2>&1 && echo "auto-4 = $o bitwise" | tee -a $OUT/p/e2e.txt; done
cd $OUT && tar czf p.tgz p && rm -rf p
