# No prefetch, evict-first pool loads and the up walk one step shorter as defaults: A/B, tests,
# bitwise check, profile.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t $OUT/prof
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; mb=$3; pool=$4; shift 4; env SSTCLIM_CUDA_DEFINES="$defs" SSTCLIM_CUDA_MIN_BLOCKS=$mb timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name [$defs] mb=$mb rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" 1 f32 --repeats 3
b base-mb2 "" 2 f32 --repeats 3
b old-upstep "SC_OLD_UPSTEP" 1 f32 --repeats 3
b cached-pool "SC_CACHED_POOL" 1 f32 --repeats 3
b base-2 "" 1 f32 --repeats 3
b base-mb2-2 "" 2 f32 --repeats 3
b f64-1 "" 1 f64 --repeats 3
b f64-mb2 "" 2 f64 --repeats 3
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
b verify "" 1 f32 --repeats 1 --verify
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 150 $NCU --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis --import-source yes -k regex:sstclim_clim -c 1 -o $OUT/prof/prof $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1
echo "ncu rc=$?" | tee -a $OUT/summary.txt
$NCU -i $OUT/prof/prof.ncu-rep --page details --print-details all > $OUT/prof/details.txt 2>&1
$NCU -i $OUT/prof/prof.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
rm -f $OUT/prof/prof.ncu-rep
cp .carry/call.sh $OUT/
cd $OUT && gzip prof/*.csv prof/details.txt && tar czf k.tgz k t prof && rm -rf k t prof
