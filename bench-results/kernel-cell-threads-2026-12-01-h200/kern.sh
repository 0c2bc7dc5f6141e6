# Threads per cell (k) in the climatology kernel: GPU engine tests (every body also runs with
# k = 2, 4, 8) and full-size kernel times for k = 1, 2, 4, 8.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
S=.carry/sstclim
mkdir -p $OUT/t $OUT/k
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; $S --version; } > $OUT/machine.txt 2>&1
t0=$(date +%s)
timeout 200 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1; echo "lib engine:: rc=$?" | tee -a $OUT/t/summary.txt
grep -E "test result|SKIP|FAILED|panicked" $OUT/t/lib-engine.txt | head -20 >> $OUT/t/summary.txt
echo "tests took $(( $(date +%s) - t0 )) s" >> $OUT/t/summary.txt
for k in 1 4 2 8; do
  SSTCLIM_GPU_CELL_THREADS=$k timeout 90 $S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --json $OUT/k/k$k.json > $OUT/k/k$k.log 2>&1
  echo "k=$k rc=$? $(grep -iE 'kernel' $OUT/k/k$k.log | head -2 | tr '\n' ' ')" | tee -a $OUT/k/summary.txt
done
cat $OUT/t/summary.txt
