# Asynchronous staging (SC_X_ASYNC_STAGE): each group's pool values copied into shared memory
# with cp.async one pass ahead (during the previous target's searches), no registers held;
# the ring's sums moved to device memory (SSTCLIM_X_RING_SUMS=1 allocates them) and its counts
# to bytes to make room. Register caps: the default (80 for the variant) and 72 (launch bounds
# of 64 threads x 14 blocks). Interleaved with the committed kernel; verify; engine tests.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/k $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; sums=$2; defs=$3; pool=$4; shift 4; env $sums SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
R=SSTCLIM_X_RING_SUMS=1; N=X=0
A="SC_X_ASYNC_STAGE"; L="SC_X_LB_THREADS=64 SC_MIN_BLOCKS=14"
b base-1 $N "" f32 --repeats 5
b async80-1 $R "$A" f32 --repeats 5 --verify
b async72-1 $R "$A $L" f32 --repeats 5 --verify
b evict72-1 $R "$A $L SC_X_ASYNC_EVICT" f32 --repeats 5
b base72-1 $N "$L" f32 --repeats 5
b base-2 $N "" f32 --repeats 5
b async80-2 $R "$A" f32 --repeats 5
b async72-2 $R "$A $L" f32 --repeats 5
b evict72-2 $R "$A $L SC_X_ASYNC_EVICT" f32 --repeats 5
b base-mean $N "" f32 --repeats 5 --mean-only
b async72-mean $R "$A $L" f32 --repeats 5 --mean-only
b f64-define $R "$A" f64 --repeats 3 --verify
SSTCLIM_X_RING_SUMS=1 SSTCLIM_CUDA_DEFINES="$A" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-async.txt 2>&1
echo "lib engine:: async rc=$? $(grep 'test result' $OUT/t/lib-engine-async.txt)" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
