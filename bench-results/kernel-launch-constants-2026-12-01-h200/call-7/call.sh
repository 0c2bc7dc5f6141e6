# Ring rows the searches do not read written with a streaming hint (default of this binary;
# SC_NO_COLD_STREAM turns it off), and the rows they read kept in shared memory
# (SSTCLIM_CUDA_HOT_SHARED=1): A/B on the full-size float32 job, then full-size checks.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b cold-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES=SC_NO_COLD_STREAM b nocold-$i f32 --repeats 5
  SSTCLIM_CUDA_HOT_SHARED=1 b hot-$i f32 --repeats 5
done
SSTCLIM_CUDA_HOT_SHARED=1 SSTCLIM_CUDA_MIN_BLOCKS=1 b hot-uncapped f32 --repeats 5
SSTCLIM_CUDA_HOT_SHARED=1 b hot-b128 f32 --repeats 5 --gpu-block 128
b f64-cold f64 --repeats 3
SSTCLIM_CUDA_DEFINES=SC_NO_COLD_STREAM b f64-nocold f64 --repeats 3
SSTCLIM_CUDA_HOT_SHARED=1 b f64-hot f64 --repeats 3
SSTCLIM_CUDA_HOT_SHARED=1 b verify-hot f32 --repeats 1 --verify
b verify-cold f32 --repeats 1 --verify
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
