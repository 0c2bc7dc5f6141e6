# Sorted-heads walk and the empty-group skip: A/B on the full-size job (float32 and float64),
# register caps and block size for the new kernel, full-size --verify, GPU engine tests, and a
# quarter-size Nsight Compute profile of the new kernel.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b new-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_TOURNAMENT_WALK SC_NO_EMPTY_SKIP" b old-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_NO_EMPTY_SKIP" b walk-only-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_TOURNAMENT_WALK" b skip-only-$i f32 --repeats 5
done
SSTCLIM_CUDA_MIN_BLOCKS=1 b new-uncapped f32 --repeats 5
SSTCLIM_CUDA_MIN_BLOCKS=4 b new-minb4 f32 --repeats 5
b new-b128 f32 --repeats 5 --gpu-block 128
b f64-new f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_TOURNAMENT_WALK SC_NO_EMPTY_SKIP" b f64-old f64 --repeats 3
b verify-f32 f32 --repeats 1 --verify
b verify-f64 f64 --repeats 1 --verify
HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/k/lib-engine.txt 2>&1; echo "lib engine rc=$? $(grep 'test result' $OUT/k/lib-engine.txt)" >> $OUT/summary.txt
mkdir -p $OUT/prof
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 150 $NCU --set full -k regex:sstclim_clim -c 1 -o $OUT/prof/full $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1; echo "ncu rc=$?" >> $OUT/summary.txt
if [ -f $OUT/prof/full.ncu-rep ]; then
  $NCU -i $OUT/prof/full.ncu-rep --page details > $OUT/prof/details.txt 2>&1
  $NCU -i $OUT/prof/full.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
  gzip $OUT/prof/details.txt $OUT/prof/sass.csv; rm -f $OUT/prof/full.ncu-rep
fi
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
