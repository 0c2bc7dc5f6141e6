# Final device call of the session: GPU tests and end-to-end runs with the final binary.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/t $OUT/p
for t in libtests pipeline-tests; do
  timeout 240 .carry/$t --test-threads 4 > $OUT/t/$t.txt 2>&1; echo "$t rc=$?" | tee -a $OUT/t/summary.txt
  grep -E "test result|SKIP" $OUT/t/$t.txt | head -5 >> $OUT/t/summary.txt
done
S=.carry/sstclim; W=/tmp/sstclim-bench; D=$W/data; R=$W/rates.json
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; rm -rf $W/$name; t0=$(now); $S run "${JOB[@]}" "$@" --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm --rates none; rm -rf $W/warm
for i in 1 2 3; do run default-$i --rates none; [ $i = 3 ] || rm -rf $W/default-$i; done
for i in 1 2 3 4; do run rates-$i --rates $R; [ $i = 4 ] || rm -rf $W/rates-$i; done
run seq --rates none --segments 1 --gpu-pool host
cp $R $OUT/p/rates.json
for o in default-3 seq; do $S compare $W/rates-4 $W/$o --tolerance 0 > $OUT/p/compare-$o.txt 2>&1 && echo "rates-4 = $o bitwise" | tee -a $OUT/p/e2e.txt; done
cd $OUT && tar czf p.tgz p && rm -rf p
