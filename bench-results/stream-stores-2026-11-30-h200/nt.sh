set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE
S=.carry/sstclim
DATA=/tmp/sstclim-bench/data
W=/tmp/sstclim-bench
JOB=(--input $DATA --years 1991-2020 --doys 152-243 --half-window 5)
[ -f $DATA/.sstclim-dataset.json ] || $S -q generate --output $DATA --years 1991-2020 --doys 147-248 > $OUT/gen.txt 2>&1
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
for t in 16 8 4; do $S bench-read "${JOB[@]}" --repeats 5 --threads $t --json $OUT/floor-$t.json | tee -a $OUT/floor.txt; done
now() { date +%s.%N; }
run() { name=$1; shift; t0=$(now); env "$@" $S -q run "${JOB[@]}" --output $W/$name --backend cuda --timing-json $OUT/$name.json --trace-json $OUT/trace-$name.json > $OUT/$name.out 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/e2e.txt; }
run warm X=1
for i in 1 2 3; do run nt-$i X=1; run plain-$i SSTCLIM_STREAM_STORES=0; done
$S compare $W/nt-3 $W/plain-3 --tolerance 0 > $OUT/compare.txt 2>&1 && echo EQUAL | tee -a $OUT/e2e.txt
lscpu > $OUT/lscpu.txt
cd $OUT && tar czf all.tgz *.json *.txt *.out && rm -f *.json *.out trace-*
