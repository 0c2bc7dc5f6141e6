# Third device call: GPU tests with copies in flight; end to end over {wait, early} x {0, 3 copies in flight}.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/p $OUT/t
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 200 .carry/libtests --test-threads 4 engine:: pipeline:: > $OUT/t/lib.txt 2>&1
echo "lib engine:: pipeline:: rc=$? $(grep 'test result' $OUT/t/lib.txt)" | tee -a $OUT/t/summary.txt
timeout 200 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/t/summary.txt
W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; rm -rf $W/$name; t0=$(now); env "$@" $S run "${JOB[@]}" --rates none --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm X=1; rm -rf $W/warm
for i in 1 2 3 4 5 6; do
  run wait-sync-$i SSTCLIM_EARLY_ROWS=0 SSTCLIM_UPLOADS_IN_FLIGHT=0; rm -rf $W/wait-sync-$i
  run early-sync-$i SSTCLIM_UPLOADS_IN_FLIGHT=0; rm -rf $W/early-sync-$i
  run wait-fly-$i SSTCLIM_EARLY_ROWS=0; [ $i = 6 ] || rm -rf $W/wait-fly-$i
  run early-fly-$i X=1; [ $i = 6 ] || rm -rf $W/early-fly-$i
done
$S compare $W/early-fly-6 $W/wait-fly-6 --tolerance 0 > $OUT/p/compare-wait.txt 2>&1 && echo "early-fly-6 = wait-fly-6 bitwise" | tee -a $OUT/p/e2e.txt
rm -rf $W/wait-fly-6
rm -rf $W/seq; $S run "${JOB[@]}" --rates none --segments 1 --gpu-pool host --output $W/seq --backend cuda > $OUT/p/seq.log 2>&1
$S compare $W/early-fly-6 $W/seq --tolerance 0 > $OUT/p/compare-seq.txt 2>&1 && echo "early-fly-6 = seq bitwise" | tee -a $OUT/p/e2e.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf p.tgz p && rm -rf p && tar czf t.tgz t && rm -rf t
