# Staging and walk changes, A/B behind defines in one binary: GPU tests, timings, bitwise check, profile.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t $OUT/prof
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; pool=$3; shift 3; env SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name [$defs] rc=$? $(grep -E 'kernel median|differ' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b new-1 "" f32 --repeats 3
b old-1 "SC_OLD_WALK SC_OLD_FETCH SC_OLD_KEYS SC_BITONIC" f32 --repeats 3
b old-walk "SC_OLD_WALK" f32 --repeats 3
b old-fetch "SC_OLD_FETCH" f32 --repeats 3
b old-keys "SC_OLD_KEYS" f32 --repeats 3
b bitonic "SC_BITONIC" f32 --repeats 3
b new-2 "" f32 --repeats 3
b old-2 "SC_OLD_WALK SC_OLD_FETCH SC_OLD_KEYS SC_BITONIC" f32 --repeats 3
b f64-new "" f64 --repeats 3
b f64-old "SC_OLD_WALK SC_OLD_FETCH SC_OLD_KEYS SC_BITONIC" f64 --repeats 3
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
b verify "" f32 --repeats 1 --verify
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 150 $NCU --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis --import-source yes -k regex:sstclim_clim -c 1 -o $OUT/prof/prof $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1
echo "ncu rc=$?" | tee -a $OUT/summary.txt
$NCU -i $OUT/prof/prof.ncu-rep --page details --print-details all > $OUT/prof/details.txt 2>&1
$NCU -i $OUT/prof/prof.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
rm -f $OUT/prof/prof.ncu-rep
cp .carry/call.sh $OUT/
cd $OUT && gzip prof/*.csv prof/details.txt && tar czf k.tgz k t prof && rm -rf k t prof
