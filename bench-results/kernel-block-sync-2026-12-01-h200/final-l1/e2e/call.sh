# Final kernel (block barrier per load, L1-preferring split): GPU tests, timings, full-size
# bitwise check, end-to-end runs.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t $OUT/p
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 150 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
b() { name=$1; shift; pool=$1; shift; env "$@" timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b f32-1 f32 X=1 --repeats 5; b f32-split50 f32 SSTCLIM_CUDA_CARVEOUT=50 --repeats 3; b f32-2 f32 X=1 --repeats 5
b f64 f64 X=1 --repeats 3
b verify f32 X=1 --repeats 1 --verify
W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; rm -rf $W/$name; t0=$(now); $S run "${JOB[@]}" "$@" --output $W/$name --backend cuda --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm --rates none; rm -rf $W/warm
for i in 1 2 3 4; do run run-$i --rates none; [ $i = 4 ] || rm -rf $W/run-$i; done
run seq --rates none --segments 1 --gpu-pool host
$S compare $W/run-4 $W/seq --tolerance 0 > $OUT/p/compare-seq.txt 2>&1 && echo "run-4 = seq bitwise" | tee -a $OUT/p/e2e.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t p && rm -rf k t p
