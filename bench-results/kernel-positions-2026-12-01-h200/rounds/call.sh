# Positions moved in rounds across groups (default) vs group by group (SC_POS_LOOPS).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
b() { name=$1; pool=$2; e=$3; shift 3; env $e timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b loops-1 f32 SSTCLIM_CUDA_DEFINES=SC_POS_LOOPS --repeats 3; b rounds-1 f32 X=1 --repeats 3
b loops-2 f32 SSTCLIM_CUDA_DEFINES=SC_POS_LOOPS --repeats 3; b rounds-2 f32 X=1 --repeats 3
b verify f32 X=1 --repeats 1 --verify
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
