# Cheaper pool addressing, fewer barriers, block sizes, float64 register cap: A/B in one binary.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; mb=$3; pool=$4; shift 4; env SSTCLIM_CUDA_DEFINES="$defs" SSTCLIM_CUDA_MIN_BLOCKS=$mb timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name [$defs] mb=$mb rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" "" f32 --repeats 3
b fast "SC_FAST_FETCH" "" f32 --repeats 3
b every2 "SC_BARRIER_EVERY=2" "" f32 --repeats 3
b every4 "SC_BARRIER_EVERY=4" "" f32 --repeats 3
b fast-every2 "SC_FAST_FETCH SC_BARRIER_EVERY=2" "" f32 --repeats 3
b block64 "" "" f32 --repeats 3 --gpu-block 64
b block256 "" "" f32 --repeats 3 --gpu-block 256
b base-2 "" "" f32 --repeats 3
b fast-2 "SC_FAST_FETCH" "" f32 --repeats 3
b f64-default "" "" f64 --repeats 3
b f64-mb1 "" 1 f64 --repeats 3
b f64-fast "SC_FAST_FETCH" "" f64 --repeats 3
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
