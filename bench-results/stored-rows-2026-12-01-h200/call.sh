# Stored rows decoded on the device: readers that find a free stored row only pread the
# file's float64 values into it and the upload thread has the device decode them; the rest
# decode on the host as before. GPU tests (engine tests include the new stored-rows test),
# pipeline tests, then end to end: SSTCLIM_STORED_ROWS=0 (host decoding only, the previous
# behaviour) against the default (16 rows) and 48, alternating; outputs against the CPU engine.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/t $OUT/p
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
grep -E "stored_rows|SKIPPED" $OUT/t/lib-engine.txt | head -5 >> $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 3 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; rows=$2; be=$3; shift 3; rm -rf $W/$name; t0=$(now); SSTCLIM_STORED_ROWS=$rows $S run "${JOB[@]}" "$@" --output $W/$name --backend $be --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; rc=$?; t1=$(now); echo "$name rc=$rc $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}') $(grep -o 'of which [0-9]* decoded on the device' $OUT/p/$name.log)" | tee -a $OUT/p/e2e.txt; }
run warm 16 cuda --rates none; rm -rf $W/warm
for i in 1 2 3; do
  run off-$i 0 cuda --rates none; [ $i = 3 ] || rm -rf $W/off-$i
  run on-$i 16 cuda --rates none; [ $i = 3 ] || rm -rf $W/on-$i
  run on48-$i 48 cuda --rates none; rm -rf $W/on48-$i
done
run trace-on 16 cuda --rates none --trace-json $OUT/p/trace-on.json; rm -rf $W/trace-on
run trace-off 0 cuda --rates none --trace-json $OUT/p/trace-off.json; rm -rf $W/trace-off
run cpu-f32 0 cpu --rates none --pool f32
$S compare $W/on-3 $W/cpu-f32 --tolerance 0 > $OUT/p/compare-on.txt 2>&1 && echo "on-3 (stored rows, cuda) = cpu (f32 pool) bitwise" | tee -a $OUT/p/e2e.txt
$S compare $W/off-3 $W/cpu-f32 --tolerance 0 > $OUT/p/compare-off.txt 2>&1 && echo "off-3 (host decoding, cuda) = cpu (f32 pool) bitwise" | tee -a $OUT/p/e2e.txt
cat $OUT/p/e2e.txt $OUT/p/read-floor.txt | tee -a $OUT/summary.txt
gzip $OUT/p/trace-*.json
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz t p && rm -rf t p
