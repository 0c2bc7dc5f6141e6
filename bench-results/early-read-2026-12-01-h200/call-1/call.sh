# One device call: GPU tests, kernel old vs new, end-to-end with and without early reading.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim; OLD=.carry/sstclim-old
mkdir -p $OUT/t $OUT/k $OUT/p
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 200 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/t/summary.txt
timeout 200 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/t/summary.txt
b() { name=$1; bin=$2; timeout 90 $bin -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/k/summary.txt; }
b old-1 $OLD; b new-1 $S; b old-2 $OLD; b new-2 $S
W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; e=$2; shift 2; rm -rf $W/$name; t0=$(now); env $e $S run "${JOB[@]}" "$@" --rates none --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm X=1; rm -rf $W/warm
for i in 1 2 3 4 5; do
  run wait-$i SSTCLIM_EARLY_ROWS=0; [ $i = 5 ] || rm -rf $W/wait-$i
  run early-$i X=1; [ $i = 5 ] || rm -rf $W/early-$i
done
$S compare $W/early-5 $W/wait-5 --tolerance 0 > $OUT/p/compare-wait.txt 2>&1 && echo "early-5 = wait-5 bitwise" | tee -a $OUT/p/e2e.txt
rm -rf $W/wait-5
run seq X=1 --segments 1 --gpu-pool host
$S compare $W/early-5 $W/seq --tolerance 0 > $OUT/p/compare-seq.txt 2>&1 && echo "early-5 = seq bitwise" | tee -a $OUT/p/e2e.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf p.tgz p && rm -rf p && tar czf t.tgz t && rm -rf t
