: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 25 check on the H200: the restructured tree (after) against the commit before it
# (before), in one call: GPU engine and pipeline tests of both, bench-kernel alternating
# before/after with --verify (float32 and int16 pools), the full-size reference job (float64
# OSTIA-like input) on the GPU and on the CPU engine with both binaries, outputs compared with
# --tolerance 0.
set -u
part=${1:-all}
[ -d .carry/after ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
B=$PWD/.carry/before A=$PWD/.carry/after W=$SCRATCH/r25
mkdir -p $OUT/t $OUT/k $OUT/j $W
S=$OUT/summary.txt
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $B/sstclim --version; $A/sstclim --version; } > $OUT/machine.txt 2>&1
if [ $part != jobs ]; then
for w in before after; do
  D=$PWD/.carry/$w
  req=""; [ $w = after ] && req=cuda
  SSTCLIM_REQUIRE_BACKENDS=$req SSTCLIM_TEST_BIN=$D/sstclim timeout 200 $D/libtests --test-threads 4 engine:: > $OUT/t/$w-engine.txt 2>&1
  echo "$w lib engine:: rc=$? $(grep 'test result' $OUT/t/$w-engine.txt) skipped-lines=$(grep -c SKIPPED $OUT/t/$w-engine.txt)" | tee -a $S
  SSTCLIM_REQUIRE_BACKENDS=$req SSTCLIM_TEST_BIN=$D/sstclim timeout 150 $D/pipeline-tests --test-threads 4 > $OUT/t/$w-pipeline.txt 2>&1
  echo "$w pipeline rc=$? $(grep 'test result' $OUT/t/$w-pipeline.txt)" | tee -a $S
done
b() { w=$1; name=$2; pool=$3; shift 3; RUST_LOG=info timeout 200 .carry/$w/sstclim bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$w-$name.json > $OUT/k/$w-$name.log 2>&1; echo "$w $name rc=$? $(grep -E 'kernel median|differ' $OUT/k/$w-$name.log | tr '\n' ' ')" | tee -a $S; }
for r in 1 2; do b before f32-$r f32 --repeats 5 --verify; b after f32-$r f32 --repeats 5 --verify; done
b before i16 i16 --repeats 5 --verify; b after i16 i16 --repeats 5 --verify
fi
if [ $part != tests ]; then
t0=$(date +%s.%N); $B/sstclim --quiet generate --output $W/data; echo "generate f64 full size: $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{print b-a}') s" | tee -a $S
job=(--input $W/data --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90)
for w in before after; do
  for be in cuda cpu; do
    t0=$(date +%s.%N); .carry/$w/sstclim --quiet run "${job[@]}" --backend $be --output /dev/shm/$w-$be --timing-json $OUT/j/$w-$be.json > $OUT/j/$w-$be.log 2>&1
    echo "$w run $be rc=$? wall $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{print b-a}') s" | tee -a $S
  done
done
for be in cuda cpu; do
  $A/sstclim compare /dev/shm/before-$be /dev/shm/after-$be --tolerance 0 > $OUT/j/compare-$be.txt 2>&1
  echo "compare before/after $be rc=$? $(tail -2 $OUT/j/compare-$be.txt | tr '\n' ' ')" | tee -a $S
  rm -rf /dev/shm/before-$be
done
$A/sstclim compare /dev/shm/after-cuda /dev/shm/after-cpu --tolerance 0 > $OUT/j/compare-gpu-cpu.txt 2>&1
echo "compare after cuda/cpu (same f32 pool default?) rc=$? $(tail -2 $OUT/j/compare-gpu-cpu.txt | tr '\n' ' ')" | tee -a $S
fi
cp .carry/call.sh $OUT/
cd $OUT && tar czf r-$part.tgz t k j && rm -rf t k j
