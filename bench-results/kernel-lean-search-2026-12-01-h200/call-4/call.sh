# Final call of this stop: the kept kernel (register-lean search, opaque ring column, offset
# entries, binary-search counts for float32, no barrier for float32) against main at 28ae090
# (sstclim-old) and call 1's kernel (sstclim-prev); its two knobs; full-size --verify, GPU
# engine and pipeline tests, end-to-end runs compared with the CPU engine on the same pool.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/k $OUT/t $OUT/p
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; bin=$2; pool=$3; shift 3; timeout 200 $bin bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b final-$i $S f32 --repeats 5
  b prev-$i .carry/sstclim-prev f32 --repeats 5
done
b old .carry/sstclim-old f32 --repeats 5
SSTCLIM_CUDA_DEFINES="SC_X_LINEAR_COUNT" b linear-count $S f32 --repeats 5
SSTCLIM_CUDA_DEFINES="SC_X_BARRIER" b barrier $S f32 --repeats 5
b final-f64 $S f64 --repeats 3
b prev-f64 .carry/sstclim-prev f64 --repeats 3
b verify-f32 $S f32 --repeats 1 --verify
b verify-f64 $S f64 --repeats 1 --verify
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; be=$2; shift 2; rm -rf $W/$name; t0=$(now); $S run "${JOB[@]}" "$@" --output $W/$name --backend $be --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
run warm cuda --rates none; rm -rf $W/warm
for i in 1 2 3; do run run-$i cuda --rates none; [ $i = 3 ] || rm -rf $W/run-$i; done
run cpu-f32 cpu --rates none --pool f32
$S compare $W/run-3 $W/cpu-f32 --tolerance 0 > $OUT/p/compare-cpu-f32.txt 2>&1 && echo "run-3 (cuda, f32 pool) = cpu (f32 pool) bitwise" | tee -a $OUT/p/e2e.txt
cat $OUT/p/e2e.txt $OUT/p/read-floor.txt | tee -a $OUT/summary.txt
mkdir -p $OUT/prof
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 100 $NCU --set full -k regex:sstclim_clim -c 1 -o $OUT/prof/full $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1; echo "ncu rc=$?" >> $OUT/summary.txt
if [ -f $OUT/prof/full.ncu-rep ]; then
  $NCU -i $OUT/prof/full.ncu-rep --page details > $OUT/prof/details.txt 2>&1
  $NCU -i $OUT/prof/full.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
  gzip $OUT/prof/details.txt $OUT/prof/sass.csv; rm -f $OUT/prof/full.ncu-rep
fi
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t p && rm -rf k t p
