# SC_WALK_AHEAD = D: each group's next D keys in registers during a search. GPU engine tests
# with D = 1 and 3, then full-size kernel times for D = 0..4, with and without hints.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/t $OUT/k
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
for d in 3 1; do
  SSTCLIM_CUDA_WALK_AHEAD=$d timeout 200 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-d$d.txt 2>&1
  echo "D=$d lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-d$d.txt)" | tee -a $OUT/t/summary.txt
done
b() { name=$1; d=$2; shift 2; SSTCLIM_CUDA_WALK_AHEAD=$d timeout 90 $S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --json $OUT/k/$name.json "$@" > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/k/summary.txt; }
b d0 0
b d2 2
b d3 3
b d4 4
b d1 1
b d3-nohints 3 --gpu-no-hints
b d4-nohints 4 --gpu-no-hints
b d6-nohints 6 --gpu-no-hints
