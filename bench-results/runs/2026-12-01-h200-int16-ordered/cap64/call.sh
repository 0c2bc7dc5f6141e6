# The ordered int16 kernel capped at 64 registers (SC_MIN_BLOCKS=4: 32 warps a multiprocessor,
# no spills in its SASS) against its 80 (24 warps), reference job on an OSTIA-like int16 pool.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/k
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; pool=$3; shift 3; SSTCLIM_CUDA_DEFINES="$defs" RUST_LOG=info timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b i16o-1 "" i16 --repeats 5
b i16o-cap64-1 "SC_MIN_BLOCKS=4" i16 --repeats 5 --verify
b i16o-2 "" i16 --repeats 5
b i16o-cap64-2 "SC_MIN_BLOCKS=4" i16 --repeats 5
b f32-cap64 "SC_MIN_BLOCKS=4" f32 --repeats 5
b f32 "" f32 --repeats 5
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
