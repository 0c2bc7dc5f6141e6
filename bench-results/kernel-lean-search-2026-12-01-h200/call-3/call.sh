# Call 3: binary-search counts at staging and u16 counts in shared memory (more L1), against
# call 1's kept kernel (sstclim-prev); L1/occupancy carveouts; verify, GPU engine and pipeline tests.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/k $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; bin=$2; pool=$3; shift 3; timeout 200 $bin bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b prev-$i .carry/sstclim-prev f32 --repeats 5
  b new-$i $S f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_X_LINEAR_COUNT" b linear-count-$i $S f32 --repeats 5
  SSTCLIM_CUDA_CARVEOUT=72 b carve72-$i $S f32 --repeats 5
done
for c in 44 30; do SSTCLIM_CUDA_CARVEOUT=$c b carve$c $S f32 --repeats 5; done
SSTCLIM_CUDA_DEFINES="SC_X_NO_BARRIER" b no-barrier-1 $S f32 --repeats 5
SSTCLIM_CUDA_DEFINES="SC_X_NO_BARRIER" b no-barrier-2 $S f32 --repeats 5
SSTCLIM_CUDA_DEFINES="SC_X_NO_BARRIER" b no-barrier-b32 $S f32 --repeats 5 --gpu-block 32
b new-b128 $S f32 --repeats 5 --gpu-block 128
b f64-prev .carry/sstclim-prev f64 --repeats 3
b f64-new $S f64 --repeats 3
b verify-f32 $S f32 --repeats 1 --verify
b verify-f64 $S f64 --repeats 1 --verify
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
