# Pool loads evict-first, no barrier, no prefetch, register cap: A/B behind defines in one binary.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; mb=$3; pool=$4; shift 4; env SSTCLIM_CUDA_DEFINES="$defs" SSTCLIM_CUDA_MIN_BLOCKS=$mb timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name [$defs] mb=$mb rc=$? $(grep -E 'kernel median|differ' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" 1 f32 --repeats 3
b stream "SC_STREAM_POOL" 1 f32 --repeats 3
b nobar "SC_NO_BARRIER" 1 f32 --repeats 3
b nopre "SC_NO_PREFETCH" 1 f32 --repeats 3
b nopre-mb2 "SC_NO_PREFETCH" 2 f32 --repeats 3
b mb2 "" 2 f32 --repeats 3
b stream-nobar "SC_STREAM_POOL SC_NO_BARRIER" 1 f32 --repeats 3
b stream-nopre-mb2 "SC_STREAM_POOL SC_NO_PREFETCH" 2 f32 --repeats 3
b base-2 "" 1 f32 --repeats 3
b stream-2 "SC_STREAM_POOL" 1 f32 --repeats 3
b f64-base "" 1 f64 --repeats 3
b f64-stream "SC_STREAM_POOL" 1 f64 --repeats 3
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
