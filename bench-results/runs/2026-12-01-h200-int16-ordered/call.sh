: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Int16 pools whose decoding table keeps the integers' order: the integers sorted as 32-bit
# keys (sstclim_clim_i16o_*) against the float64-keyed int16 kernel (SSTCLIM_I16_ORDERED=0).
# GPU engine and pipeline tests; bench-kernel on a full-size int16 pool (OSTIA-like packing)
# with --verify; end to end on a generated int16 dataset, outputs against the CPU engine.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/k $OUT/t $OUT/p
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
grep -E "int16|SKIPPED" $OUT/t/lib-engine.txt | head -5 >> $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
b() { name=$1; envs=$2; pool=$3; shift 3; env $envs RUST_LOG=info timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ') $(grep -o 'compiled sstclim_clim_[a-z0-9_]*' $OUT/k/$name.log | head -1)" | tee -a $OUT/summary.txt; }
b f32 "X=0" f32 --repeats 5
b i16o "X=0" i16 --repeats 5 --verify
b i16wide "SSTCLIM_I16_ORDERED=0" i16 --repeats 5 --verify
b i16o-2 "X=0" i16 --repeats 5
b i16o-mean "X=0" i16 --repeats 5 --mean-only
b i16o-f64err "X=0" i16 --repeats 1 --f64-error
W=$SCRATCH/sstclim-bench; D=$W/d16
t0=$(date +%s.%N); $S -q generate --output $D --years 1991-2020 --doys 147-248 --storage i16 > $OUT/p/generate.txt 2>&1; echo "generate i16 rc=$? $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f s", b-a}') $(du -sh $D | cut -f1)" | tee -a $OUT/summary.txt
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 3 --json $OUT/p/read-floor.json > $OUT/p/read-floor.txt
now() { date +%s.%N; }
run() { name=$1; envs=$2; be=$3; shift 3; rm -rf $W/$name; t0=$(now); env $envs RUST_LOG=info $S run "${JOB[@]}" "$@" --output $W/$name --backend $be --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; rc=$?; t1=$(now); echo "$name rc=$rc $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}') $(grep -o 'compiled sstclim_clim_[a-z0-9_]*' $OUT/p/$name.log | head -1) $(grep -o 'kernel  *[0-9.]*' $OUT/p/$name.log | head -1)" | tee -a $OUT/p/e2e.txt; }
run warm "X=0" cuda --rates none; rm -rf $W/warm
for i in 1 2; do
  run ord-$i "X=0" cuda --rates none; [ $i = 2 ] || rm -rf $W/ord-$i
  run wide-$i "SSTCLIM_I16_ORDERED=0" cuda --rates none; [ $i = 2 ] || rm -rf $W/wide-$i
done
run cpu-i16 "X=0" cpu --rates none --pool i16
$S compare $W/ord-2 $W/cpu-i16 --tolerance 0 > $OUT/p/compare-ord.txt 2>&1 && echo "ord-2 (cuda, ordered int16 kernel) = cpu (i16 pool) bitwise" | tee -a $OUT/p/e2e.txt
$S compare $W/wide-2 $W/cpu-i16 --tolerance 0 > $OUT/p/compare-wide.txt 2>&1 && echo "wide-2 (cuda, float64-keyed int16 kernel) = cpu (i16 pool) bitwise" | tee -a $OUT/p/e2e.txt
cat $OUT/p/e2e.txt $OUT/p/read-floor.txt | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t p && rm -rf k t p
