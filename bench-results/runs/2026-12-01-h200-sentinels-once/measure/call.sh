: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Rows 0 and GLEN + 1 (the MIN and MAX sentinels, the same in every group) written once per slot
# when the kernel starts instead of with every staged group (SC_X_SENTINELS_ONCE, 2 of 33 ring
# rows): timed against the committed kernel, full-size --verify, GPU engine tests with it; then
# the committed binary's checks on the node (it now has d74c136's HDF5 open): pipeline tests, an end-to-end run compared with the CPU engine on the same pool.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/k $OUT/t $OUT/p
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; pool=$3; shift 3; SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" f32 --repeats 5
b once-1 "SC_X_SENTINELS_ONCE" f32 --repeats 5 --verify
b base-2 "" f32 --repeats 5
b once-2 "SC_X_SENTINELS_ONCE" f32 --repeats 5
b base-mean "" f32 --repeats 5 --mean-only
b once-mean "SC_X_SENTINELS_ONCE" f32 --repeats 5 --mean-only
b base-f64 "" f64 --repeats 3
b once-f64 "SC_X_SENTINELS_ONCE" f64 --repeats 3 --verify
SSTCLIM_CUDA_DEFINES="SC_X_SENTINELS_ONCE" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-once.txt 2>&1
echo "lib engine:: once rc=$? $(grep 'test result' $OUT/t/lib-engine-once.txt)" | tee -a $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
W=$SCRATCH/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 3 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; be=$2; shift 2; rm -rf $W/$name; t0=$(now); $S run "${JOB[@]}" "$@" --output $W/$name --backend $be --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; rc=$?; t1=$(now); echo "$name rc=$rc $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm cuda --rates none; rm -rf $W/warm
for i in 1 2; do run run-$i cuda --rates none; [ $i = 2 ] || rm -rf $W/run-$i; done
run cpu-f32 cpu --rates none --pool f32
$S compare $W/run-2 $W/cpu-f32 --tolerance 0 > $OUT/p/compare-cpu-f32.txt 2>&1 && echo "run-2 (cuda, f32 pool) = cpu (f32 pool) bitwise" | tee -a $OUT/p/e2e.txt
cat $OUT/p/e2e.txt $OUT/p/read-floor.txt | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t p && rm -rf k t p
