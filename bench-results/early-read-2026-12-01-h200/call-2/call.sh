# Second device call: end to end, waiting for the device vs reading while it starts (tuned).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE
S=.carry/sstclim
mkdir -p $OUT/p
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; e=$2; shift 2; rm -rf $W/$name; t0=$(now); env $e $S run "${JOB[@]}" "$@" --rates none --output $W/$name --backend cuda --timing-json $OUT/p/$name.json --trace-json $OUT/p/trace-$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm X=1; rm -rf $W/warm
for i in 1 2 3 4 5 6; do
  run wait-$i SSTCLIM_EARLY_ROWS=0; [ $i = 6 ] || rm -rf $W/wait-$i
  run early-$i X=1; [ $i = 6 ] || rm -rf $W/early-$i
  run early400-$i SSTCLIM_EARLY_ROWS=400; rm -rf $W/early400-$i
done
$S compare $W/early-6 $W/wait-6 --tolerance 0 > $OUT/p/compare-wait.txt 2>&1 && echo "early-6 = wait-6 bitwise" | tee -a $OUT/p/e2e.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf p.tgz p && rm -rf p
