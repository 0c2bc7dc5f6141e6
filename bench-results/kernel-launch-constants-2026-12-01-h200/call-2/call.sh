# Profile of the kernel compiled for its launch constants (f32, 85-register cap), and register
# caps / block sizes A/B on the full-size float32 job.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/prof
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b spec-$i f32 --repeats 5
  SSTCLIM_CUDA_MIN_BLOCKS=3 b spec-minb3-$i f32 --repeats 5
  SSTCLIM_CUDA_MIN_BLOCKS=4 b spec-minb4-$i f32 --repeats 5
done
SSTCLIM_CUDA_MIN_BLOCKS=3 b spec-minb3-b64 f32 --repeats 5 --gpu-block 64
SSTCLIM_CUDA_MIN_BLOCKS=3 b spec-minb3-b192 f32 --repeats 5 --gpu-block 192
SSTCLIM_CUDA_MIN_BLOCKS=3 SSTCLIM_CUDA_SPECIALIZE=0 b generic-minb3 f32 --repeats 5
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_MIN_BLOCKS=3 SSTCLIM_CUDA_LINEINFO=1 timeout 150 $NCU --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis -k regex:sstclim_clim -c 1 -o $OUT/prof/prof $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1
echo "ncu rc=$?" | tee -a $OUT/summary.txt
$NCU -i $OUT/prof/prof.ncu-rep --page details --print-details all > $OUT/prof/details.txt 2>&1
$NCU -i $OUT/prof/prof.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
rm -f $OUT/prof/prof.ncu-rep
cp .carry/call.sh $OUT/
cd $OUT && gzip prof/*.csv prof/details.txt && tar czf k.tgz k prof && rm -rf k prof
