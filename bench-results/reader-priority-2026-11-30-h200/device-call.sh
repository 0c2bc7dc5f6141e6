# Device call: reader priority (SSTCLIM_READER_NICE) and one core fewer for readers, 16 segments.
set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/t $OUT/p
timeout 240 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline-tests.txt 2>&1; echo "pipeline-tests rc=$?" | tee -a $OUT/t/summary.txt
grep -E "test result" $OUT/t/pipeline-tests.txt >> $OUT/t/summary.txt
S=.carry/sstclim; W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5 --rates none --segments 16)
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
$S bench-read --input $D --years 1991-2020 --doys 152-243 --repeats 1 > /dev/null
$S bench-read --input $D --years 1991-2020 --doys 152-243 --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; e=$2; shift 2; rm -rf $W/$name; t0=$(now); env $e $S -q run "${JOB[@]}" "$@" --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.err 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm X=0; rm -rf $W/warm
for i in 1 2 3 4 5; do
  run base-$i SSTCLIM_READER_NICE=0; [ $i = 5 ] || rm -rf $W/base-$i
  run nice5-$i SSTCLIM_READER_NICE=5; [ $i = 5 ] || rm -rf $W/nice5-$i
  run nice19-$i SSTCLIM_READER_NICE=19; rm -rf $W/nice19-$i
  run t15-$i X=0 --threads 15; rm -rf $W/t15-$i
done
$S compare $W/nice5-5 $W/base-5 --tolerance 0 > $OUT/p/compare.txt 2>&1 && echo "nice5-5 = base-5 bitwise" | tee -a $OUT/p/e2e.txt
cd $OUT && tar czf p.tgz p && rm -rf p
