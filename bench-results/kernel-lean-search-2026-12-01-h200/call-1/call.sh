# Call 1: register-lean search, opaque ring column, offset entries, truncated walks: A/B on the
# full-size job against the previous binary (sstclim-old); verify, GPU engine tests.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/k $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; bin=$2; pool=$3; shift 3; timeout 200 $bin bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b old-$i .carry/sstclim-old f32 --repeats 5
  b new-$i $S f32 --repeats 5
  SSTCLIM_CUDA_MIN_BLOCKS=4 b new-minb4-$i $S f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" b trunc-$i $S f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" SSTCLIM_CUDA_MIN_BLOCKS=4 b trunc-minb4-$i $S f32 --repeats 5
done
SSTCLIM_CUDA_DEFINES="SC_X_NO_OPAQUE" b no-opaque $S f32 --repeats 5
SSTCLIM_CUDA_DEFINES="SC_X_PACKED_ENTRY" b packed-entry $S f32 --repeats 5
SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" b trunc-b128 $S f32 --repeats 5 --gpu-block 128
b f64-old .carry/sstclim-old f64 --repeats 3
b f64-new $S f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" b f64-trunc $S f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" b verify-trunc-f32 $S f32 --repeats 1 --verify
SSTCLIM_CUDA_MIN_BLOCKS=4 b verify-minb4-f32 $S f32 --repeats 1 --verify
SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" b verify-trunc-f64 $S f64 --repeats 1 --verify
SSTCLIM_CUDA_DEFINES="SC_X_TRUNC" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-trunc.txt 2>&1
echo "lib engine:: trunc rc=$? $(grep 'test result' $OUT/t/lib-engine-trunc.txt)" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
