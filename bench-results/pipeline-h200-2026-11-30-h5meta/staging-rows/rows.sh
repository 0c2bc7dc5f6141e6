set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
.carry/h5meta-tests > $OUT/h5meta-tests.txt 2>&1; echo "h5meta-tests rc=$?"; grep -E "test result|NOTE" $OUT/h5meta-tests.txt
S=.carry/sstclim; W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null 2>&1
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 | tee $OUT/floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; t0=$(now); env "$@" $S -q run "${JOB[@]}" --output $W/$name --backend cuda --timing-json $OUT/$name.json --trace-json $OUT/trace-$name.json > /dev/null 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/e2e.txt; }
run warm X=1
for i in 1 2 3; do run rows3-$i SSTCLIM_STAGING_ROWS=3; run rows8-$i SSTCLIM_STAGING_ROWS=8; run rows16-$i SSTCLIM_STAGING_ROWS=16; done
cd $OUT && tar czf all.tgz *.json *.txt && rm -f *.json trace-*
