# Binary-searched starting positions (SC_POS_BSEARCH) and the next load's table entries fetched
# during the barrier (SC_META_PREFETCH): A/B, then GPU tests and a full-size bitwise check with both.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; pool=$3; shift 3; env SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name [$defs] rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" f32 --repeats 5
b bsearch-1 "SC_POS_BSEARCH" f32 --repeats 5
b meta-1 "SC_META_PREFETCH" f32 --repeats 5
b both-1 "SC_POS_BSEARCH SC_META_PREFETCH" f32 --repeats 5
b base-2 "" f32 --repeats 5
b bsearch-2 "SC_POS_BSEARCH" f32 --repeats 5
b meta-2 "SC_META_PREFETCH" f32 --repeats 5
b both-2 "SC_POS_BSEARCH SC_META_PREFETCH" f32 --repeats 5
b f64-base "" f64 --repeats 3
b f64-both "SC_POS_BSEARCH SC_META_PREFETCH" f64 --repeats 3
b verify-both "SC_POS_BSEARCH SC_META_PREFETCH" f32 --repeats 1 --verify
SSTCLIM_CUDA_DEFINES="SC_POS_BSEARCH SC_META_PREFETCH" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-both.txt 2>&1
echo "lib engine:: (both) rc=$? $(grep 'test result' $OUT/t/lib-engine-both.txt)" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
