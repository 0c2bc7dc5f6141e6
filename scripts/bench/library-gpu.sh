: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 41 (the library restructure) on the GPU node, one call: the GPU engine and pipeline
# tests of the after tree with SSTCLIM_REQUIRE_BACKENDS=cuda (a CUDA test cannot skip); then
# a global 1440x721 int16 dataset (1991-2020, every day) and, with the binary before (6f62bd9)
# and after, alternating: the full-year Hobday climatology on the GPU, the reference job (days
# 152-243) on the GPU and on the CPU engine, and `events --both` against the climatology; every
# pair compared with `sstclim compare --tolerance 0`.
# Expects .carry/bins.tar.xz holding before/sstclim and after/{sstclim,libtests,it} (stripped,
# netcdf-static).
# Usage (device tool, repository root): bash scripts/bench/library-gpu.sh
set -u
# the checks run under a time limit, so that the results are packed even where the device
# call's limit would cut them short
if [ "${INNER:-}" != 1 ]; then
  mkdir -p "$OUT/t" "$OUT/j"
  INNER=1 timeout "${LIMIT:-540}" bash "$0"; echo "checks rc=$? (124: cut at the time limit)" | tee -a "$OUT/summary.txt"
  cp "$0" "$OUT/" 2>/dev/null
  (cd "$OUT" && tar czf r-s41.tgz t j && rm -rf t j)
  exit 0
fi
[ -d .carry/after ] || (cd .carry && tar xJf bins.tar.xz)
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
B=$PWD/.carry/before/sstclim A=$PWD/.carry/after/sstclim W=$SCRATCH/s41
mkdir -p "$W" "$OUT/t" "$OUT/j"
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h "$SCRATCH"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$B" --version; "$A" --version; } > "$OUT/machine.txt" 2>&1
t() { local t0=$(date +%s.%N); "$@" > /dev/null 2>> "$OUT/j/stderr.txt"; local rc=$?; awk -v a="$t0" -v b="$(date +%s.%N)" -v rc=$rc 'BEGIN{printf "%.2f s rc=%d", b-a, rc}'; }
cmp0() { "$A" compare "$1" "$2" --tolerance 0 > "$OUT/j/compare-$3.txt" 2>&1; echo "compare $3: rc=$? $(tail -1 "$OUT/j/compare-$3.txt")" | tee -a "$S"; }
# 1. the tests (the library example's test needs the build tree: left out here)
SSTCLIM_REQUIRE_BACKENDS=cuda SSTCLIM_TEST_BIN=$A timeout 200 .carry/after/libtests --test-threads 4 engine:: > "$OUT/t/libtests-engine.txt" 2>&1
echo "libtests engine:: rc=$? $(grep 'test result' "$OUT/t/libtests-engine.txt") cuda-tests=$(grep -c '::cuda .* ok' "$OUT/t/libtests-engine.txt")" | tee -a "$S"
SSTCLIM_REQUIRE_BACKENDS=cuda SSTCLIM_TEST_BIN=$A timeout 200 .carry/after/it --test-threads 4 run::backends run::pipeline > "$OUT/t/it-gpu.txt" 2>&1
echo "it run::backends run::pipeline rc=$? $(grep 'test result' "$OUT/t/it-gpu.txt") cuda-tests=$(grep -c 'cuda.* ok' "$OUT/t/it-gpu.txt")" | tee -a "$S"
# 2. the data
[ -d "$W/data" ] || echo "generate 1440x721 i16 1991-2020 every day: $(t "$A" -q generate --output "$W/data" --storage i16 --years 1991-2020 --doys 1-366)" | tee -a "$S"
# 3. the jobs, before and after alternating (run's climatology years: --years before, --baseline after)
hob="--calendar hobday366 --window-edges extend --feb29 interpolate --smooth 31 --method 7 --percentile 10,90 --layout climatology"
for w in B A; do bin=${!w}; y=--baseline; [ $w = B ] && y=--years
  echo "$w full-year hobday climatology cuda: $(t "$bin" -q run -i "$W/data" -o "$W/$w-clim" $y 1991-2020 $hob --backend cuda --overwrite)" | tee -a "$S"
done
cmp0 "$W/B-clim" "$W/A-clim" full-year-climatology-cuda
rm -rf "$W/B-clim"  # (the disk holds the data, one climatology and two events outputs)
for w in B A; do bin=${!w}; y=--baseline; [ $w = B ] && y=--years
  for be in cuda cpu; do
    echo "$w reference job $be: $(t "$bin" -q run -i "$W/data" -o "$W/$w-ref-$be" $y 1991-2020 --doys 152-243 --backend $be --overwrite --timing-json "$OUT/j/$w-ref-$be.json")" | tee -a "$S"
  done
done
cmp0 "$W/B-ref-cuda" "$W/A-ref-cuda" reference-cuda
cmp0 "$W/B-ref-cpu" "$W/A-ref-cpu" reference-cpu
rm -rf "$W"/?-ref-*
for w in B A; do bin=${!w}
  echo "$w events --both 1991-2020: $(t "$bin" -q events -i "$W/data" -o "$W/$w-ev" --years 1991-2020 --climatology "$W/A-clim/climatology.nc" --both --overwrite)" | tee -a "$S"
done
cmp0 "$W/B-ev" "$W/A-ev" events-both
