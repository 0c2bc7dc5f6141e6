# L2-compressible device memory for the pool and the ring (SSTCLIM_CUDA_COMPRESSIBLE=1: every
# engine allocation through cuMemCreate with CU_MEM_ALLOCATION_COMP_GENERIC; =0 the same API
# without compression), against plain cuMemAlloc. The profile counted every ring write as L2
# compression input with 0 % success.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/k
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; comp=$2; pool=$3; shift 3; if [ -n "$comp" ]; then export SSTCLIM_CUDA_COMPRESSIBLE=$comp; else unset SSTCLIM_CUDA_COMPRESSIBLE; fi; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ') $(grep -o 'compression type [0-9] granted' $OUT/k/$name.log | sort | uniq -c | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" f32 --repeats 5
b comp-1 1 f32 --repeats 5 --verify
b vmm-1 0 f32 --repeats 5
b base-2 "" f32 --repeats 5
b comp-2 1 f32 --repeats 5
b comp-mean 1 f32 --repeats 3 --mean-only
b base-mean "" f32 --repeats 3 --mean-only
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
