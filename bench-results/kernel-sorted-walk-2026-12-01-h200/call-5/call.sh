# Register caps through the compiled block size (SC_TARGET_REGS): float32 at 72 registers (14
# blocks of 64, 28 warps a multiprocessor) against the default 85-register cap (80 used, 24
# warps); float64 at 96 and 80 against the default 128 (blocks of 128). Full-size --verify and
# GPU engine tests with the 72-register cap.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b default-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_TARGET_REGS=72" b regs72-$i f32 --repeats 5
done
b f64-default f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_TARGET_REGS=96" b f64-regs96 f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_TARGET_REGS=80" b f64-regs80 f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_TARGET_REGS=72" b verify-regs72 f32 --repeats 1 --verify
SSTCLIM_CUDA_DEFINES="SC_TARGET_REGS=72" timeout 130 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-regs72.txt 2>&1
echo "lib engine:: regs72 rc=$? $(grep 'test result' $OUT/t/lib-engine-regs72.txt)" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
