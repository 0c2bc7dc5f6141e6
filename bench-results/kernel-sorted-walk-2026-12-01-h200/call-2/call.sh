# Device-memory ring laid out per thread ([cell][slot][row], 16-byte stores) against the
# interleaved layout (SC_INTERLEAVED_RING); L2 prefetch of the next group's pool rows
# (SC_PREFETCH_NEXT) and no barrier per pass (SC_NO_PASS_BARRIER); register cap and block size;
# float64; full-size --verify; GPU engine tests; quarter-size profile.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b thread-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_INTERLEAVED_RING" b inter-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_PREFETCH_NEXT" b pref-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES="SC_NO_PASS_BARRIER" b nobar-$i f32 --repeats 5
done
SSTCLIM_CUDA_DEFINES="SC_PREFETCH_NEXT SC_NO_PASS_BARRIER" b pref-nobar f32 --repeats 5
SSTCLIM_CUDA_MIN_BLOCKS=1 b thread-uncapped f32 --repeats 5
SSTCLIM_CUDA_MIN_BLOCKS=2 b thread-minb2 f32 --repeats 5
b thread-b128 f32 --repeats 5 --gpu-block 128
b thread-b32 f32 --repeats 5 --gpu-block 32
b f64-thread f64 --repeats 3
SSTCLIM_CUDA_DEFINES="SC_INTERLEAVED_RING" b f64-inter f64 --repeats 3
b f64-thread-b64 f64 --repeats 3 --gpu-block 64
b verify-f32 f32 --repeats 1 --verify
b verify-f64 f64 --repeats 1 --verify
HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/k/lib-engine.txt 2>&1; echo "lib engine rc=$? $(grep 'test result' $OUT/k/lib-engine.txt)" >> $OUT/summary.txt
mkdir -p $OUT/prof
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 120 $NCU --set full -k regex:sstclim_clim -c 1 -o $OUT/prof/full $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1; echo "ncu rc=$?" >> $OUT/summary.txt
if [ -f $OUT/prof/full.ncu-rep ]; then
  $NCU -i $OUT/prof/full.ncu-rep --page details > $OUT/prof/details.txt 2>&1
  $NCU -i $OUT/prof/full.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
  gzip $OUT/prof/details.txt $OUT/prof/sass.csv; rm -f $OUT/prof/full.ncu-rep
fi
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
