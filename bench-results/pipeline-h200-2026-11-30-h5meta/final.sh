# The device call that produced this directory (run from the repository root on the H200 node,
# with the statically linked build and the test binaries carried in .carry/).
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p $OUT/t
for t in libtests pipeline-tests backends-tests h5meta-tests; do
  timeout 240 .carry/$t --test-threads 4 > $OUT/t/$t.txt 2>&1; echo "$t rc=$?" | tee -a $OUT/t/summary.txt
  grep -E "test result|SKIP" $OUT/t/$t.txt | head -5 >> $OUT/t/summary.txt
done
SSTCLIM=.carry/sstclim bash scripts/bench-pipeline.sh $OUT/p /tmp/sstclim-bench/data cuda > $OUT/p-log.txt 2>&1
S=.carry/sstclim; W=/tmp/sstclim-bench
JOB=(--input /tmp/sstclim-bench/data --years 1991-2020 --doys 152-243 --half-window 5)
now() { date +%s.%N; }
run() { name=$1; shift; t0=$(now); env "$@" $S -q run "${JOB[@]}" --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > /dev/null 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/h5meta-e2e.txt; }
for i in 1 2 3; do run h5lib-$i SSTCLIM_H5META=off; run h5par-$i SSTCLIM_H5META=on; done
