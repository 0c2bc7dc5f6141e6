# Diagnostics: the same k without hints (searches from the nearer end: no dependence on how
# old the previous day's value is) and with the ring's keys in device memory.
set -u
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
b() { name=$1; k=$2; shift 2; SSTCLIM_GPU_CELL_THREADS=$k timeout 90 $S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --json $OUT/k/$name.json "$@" > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/k/summary2.txt; }
b k1-nohints 1 --gpu-no-hints
b k4-nohints 4 --gpu-no-hints
b k2-nohints 2 --gpu-no-hints
b k4-global 4 --gpu-ring global
b k1-shared 1 --gpu-ring shared
