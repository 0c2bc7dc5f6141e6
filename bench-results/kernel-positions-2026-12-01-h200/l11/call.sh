# An 11-group instantiation for the reference job's windows: GPU tests, timings, bitwise check.
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
b() { name=$1; pool=$2; shift 2; timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|launch' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b f32-1 f32 --repeats 5; b f32-2 f32 --repeats 5; b f64 f64 --repeats 3
b verify f32 --repeats 1 --verify
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
