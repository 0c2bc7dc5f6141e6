# Output files created by up to 4 processes, and compiled kernels kept on disk between runs
# (src/engine/gpu/kcache.rs): sstclim (new) against sstclim-old (64ff57e), and the new one with
# SSTCLIM_KERNEL_CACHE=none, alternating, end to end on generated full-size int16 (OSTIA-like)
# and float64 datasets; GPU engine and pipeline tests; timelines of one run of each.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/p $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine.txt 2>&1
echo "lib engine:: rc=$? $(grep 'test result' $OUT/t/lib-engine.txt)" | tee -a $OUT/summary.txt
timeout 120 .carry/pipeline-tests --test-threads 4 > $OUT/t/pipeline.txt 2>&1
echo "pipeline rc=$? $(grep 'test result' $OUT/t/pipeline.txt)" | tee -a $OUT/summary.txt
W=/tmp/sstclim-bench
$S -q generate --output $W/d16 --years 1991-2020 --doys 147-248 --storage i16 > $OUT/p/generate16.txt 2>&1
$S -q generate --output $W/d64 --years 1991-2020 --doys 147-248 > $OUT/p/generate64.txt 2>&1
now() { date +%s.%N; }
run() { name=$1; bin=$2; envs=$3; d=$4; shift 4; rm -rf $W/$name; t0=$(now); env $envs RUST_LOG=info .carry/$bin run --input $W/$d --years 1991-2020 --doys 152-243 --half-window 5 "$@" --output $W/$name --backend cuda --rates none --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; rc=$?; t1=$(now); echo "$name rc=$rc $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}') $(grep -o 'compiled sstclim_clim_[a-z0-9_]* for sm_90 in [0-9.]* s\|loaded sstclim_clim_[a-z0-9_]* for sm_90 from the kernel cache' $OUT/p/$name.log | head -1)" | tee -a $OUT/p/e2e.txt; }
for d in d16 d64; do
  $S bench-read --input $W/$d --years 1991-2020 --doys 152-243 --repeats 1 > /dev/null
  $S bench-read --input $W/$d --years 1991-2020 --doys 152-243 --repeats 3 > $OUT/p/read-floor-$d.txt
  run warm-$d sstclim X=0 $d; rm -rf $W/warm-$d
  for i in 1 2 3 4; do
    run old-$d-$i sstclim-old X=0 $d; [ $i = 4 ] || rm -rf $W/old-$d-$i
    run new-$d-$i sstclim X=0 $d; [ $i = 4 ] || rm -rf $W/new-$d-$i
    run nocache-$d-$i sstclim SSTCLIM_KERNEL_CACHE=none $d; rm -rf $W/nocache-$d-$i
  done
  $S compare $W/new-$d-4 $W/old-$d-4 --tolerance 0 > $OUT/p/compare-$d.txt 2>&1 && echo "new-$d-4 = old-$d-4 bitwise" | tee -a $OUT/p/e2e.txt
  rm -rf $W/new-$d-4 $W/old-$d-4
done
for b in new:sstclim old:sstclim-old; do run tl-${b%%:*} ${b#*:} X=0 d16 --trace-json $OUT/p/timeline-${b%%:*}.json; rm -rf $W/tl-${b%%:*}; done
cat $OUT/p/e2e.txt $OUT/p/read-floor-*.txt >> $OUT/summary.txt
gzip $OUT/p/timeline-*.json
cp .carry/call.sh $OUT/
cd $OUT && tar czf p.tgz p t && rm -rf p t
