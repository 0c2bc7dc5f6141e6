# SC_NO_HINTS: the searches compiled without hints (code and registers of the hint bookkeeping
# gone). GPU engine tests with it, then full-size kernel times, also with register caps.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/t $OUT/k
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
SSTCLIM_CUDA_NO_HINTS=1 timeout 200 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-nohints.txt 2>&1
echo "no-hints lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-nohints.txt)" | tee -a $OUT/t/summary.txt
b() { name=$1; shift; env "$@" timeout 90 $S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/k/summary.txt; }
b base X=1
b nohints SSTCLIM_CUDA_NO_HINTS=1
b nohints-mb2 SSTCLIM_CUDA_NO_HINTS=1 SSTCLIM_CUDA_MIN_BLOCKS=2
b nohints-mb3 SSTCLIM_CUDA_NO_HINTS=1 SSTCLIM_CUDA_MIN_BLOCKS=3
b base-mb2 SSTCLIM_CUDA_MIN_BLOCKS=2
