# The kernel with a block barrier per load (now the default): GPU tests, timings, variants, a
# full-size bitwise check against the CPU engine.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 150 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
b() { name=$1; defs=$2; shift 2; SSTCLIM_CUDA_DEFINES="$defs" timeout 300 $S -q bench-kernel --backend cuda --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|verif' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b new-1 "" --repeats 5; b store-1 SC_SYNC_STORE --repeats 3; b b96-1 "" --gpu-block 96 --repeats 3; b b192-1 "" --gpu-block 192 --repeats 3
b new-2 "" --repeats 5; b store-2 SC_SYNC_STORE --repeats 3
b f64 "" --pool f64 --repeats 3
b verify "" --repeats 1 --verify
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
