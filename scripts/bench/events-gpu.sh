: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 42 on the GPU node, one call: the events GPU tests with SSTCLIM_REQUIRE_BACKENDS=cuda
# (a CUDA test cannot skip), then the issue's three performance targets beside their floors,
# on default flags (no --max-mem), in one script and one warm page cache:
#   - the data: a global 1440x721 int16 dataset, 1982-2022, every day (14,975 files),
#     (time, zlev, lat, lon), deflate 4 + shuffle, one chunk a file (as the s36/s37 runs);
#   - the read-and-inflate floor of those files (bench-read --inflate, median of 3), twice;
#   - the climatology C, 1983-2012, marineHeatWaves' rules (P10 and P90 in one file), as
#     `run --layout climatology` writes it by default (float64), and the same with
#     `--output-type f32 --deflate 1`, whose write stage is compared with the disk's floor for
#     the same file (bench-write-floor --like, median of 2);
#   - `events --both --climatology C --output-type f32 --deflate 1` (backend auto: the GPU),
#     twice, then with `--backend cpu` (outputs compared bit for bit with the GPU's);
#   - `events --both --baseline 1983-2012 --output-type f32 --deflate 1` (one command),
#     compared with the --climatology C outputs;
#   - where time is left, the binary before issue 42 on the first events job (its figure and
#     its outputs, compared).
# Every job writes --timing-json (stages: read, climatology, detect, write, overlapped).
# Expects .carry/bins.tar.xz holding sstclim, libtests, it (features netcdf-static,bench,
# test-hooks, stripped) and before/sstclim (main before issue 42).
# Usage (device tool, repository root): bash scripts/bench/events-gpu.sh; cat $OUT/summary.txt
# Results: $OUT/summary.txt, $OUT/machine.txt, $OUT/r-events-s42.tgz (logs and timing JSON).
set -u
R=$SCRATCH/s42res
# the measurements run under a time limit, so that the results are packed even where the
# device call's limit would cut them short
if [ "${INNER:-}" != 1 ]; then
  mkdir -p "$R"
  INNER=1 timeout "${LIMIT:-540}" bash "$0"; echo "measurements rc=$? (124: cut at the time limit)" | tee -a "$OUT/summary.txt"
  cp "$0" "$OUT/" 2>/dev/null
  (cd "$R" && tar czf "$OUT/r-events-s42.tgz" .)
  exit 0
fi
[ -x .carry/sstclim ] || (cd .carry && tar xJf bins.tar.xz)
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim B=$PWD/.carry/before/sstclim W=$SCRATCH/s42 D=$SCRATCH/s42/data
mkdir -p "$W"
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h "$SCRATCH"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$X" --version; } > "$OUT/machine.txt" 2>&1
# t NAME CMD...: wall, CPU and peak memory of CMD, and its result line
t() {
  local name=$1; shift
  /usr/bin/time -f "$name wall %e s user %U s sys %S s maxrss %M kB" "$@" > "$R/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(tail -1 "$R/$name.log") | $(grep -E 'events in|inflate floor|write floor|wrote [0-9]+ files|test result' "$R/$name.log" | head -1)" | tee -a "$S"
}
cmp0() { "$X" compare "$1" "$2" --tolerance 0 > "$R/compare-$3.txt" 2>&1; echo "compare $3: rc=$? $(tail -1 "$R/compare-$3.txt")" | tee -a "$S"; }
# 1. the tests: GPU detection against the CPU scan, events end to end on every backend
if [ "${SKIP_TESTS:-}" != 1 ]; then
  SSTCLIM_REQUIRE_BACKENDS=cuda SSTCLIM_TEST_BIN=$X t libtests-events timeout 200 .carry/libtests --test-threads 4 events
  grep -E 'cuda|hip' "$R/libtests-events.log" | grep -E ' ok$| FAILED$|ignored' | head -40 >> "$S"
  SSTCLIM_REQUIRE_BACKENDS=cuda SSTCLIM_TEST_BIN=$X t it-events timeout 200 .carry/it --test-threads 4 events::
fi
# 2. the data and the climatologies
GEN=(--grid 1440x721 --years 1982-2022 --doys 1-366 --storage i16 --time-dim --zlev-dim --deflate 4 --shuffle)
if [ "$(ls "$D" 2>/dev/null | wc -l)" = 14975 ]; then
  echo "data: reused $D" | tee -a "$S"
else
  rm -rf "$D"
  t generate "$X" -q generate --output "$D" "${GEN[@]}"
fi
echo "data: $(ls "$D" | wc -l) files, $(du -sh "$D" | cut -f1)" | tee -a "$S"
t sync sync
HOB=(--baseline 1983-2012 --calendar hobday366 --percentile 10,90 --method 7 --window-edges extend --feb29 interpolate --smooth 31 --layout climatology --overwrite)
C=$W/clim/climatology.nc
[ -s "$C" ] || t climatology-f64 "$X" run --input "$D" --output "$W/clim" "${HOB[@]}" --timing-json "$R/climatology-f64.json"
t climatology-f32-deflate1 "$X" run --input "$D" --output "$W/clim32" "${HOB[@]}" --output-type f32 --deflate 1 --timing-json "$R/climatology-f32-deflate1.json"
sync
t write-floor-clim32 "$X" bench-write-floor --like "$W/clim32" --dir "$W/floor" --repeats 2
ls -la "$W/clim" "$W/clim32" >> "$S"
rm -rf "$W/clim32" "$W/floor"
# 3. events against C, floors before each pair
EV=(events --input "$D" --years 1982-2022 --climatology "$C" --overwrite --both --output-type f32 --deflate 1)
for r in 1 2; do
  t floor-inflate-$r "$X" bench-read --input "$D" --baseline 1982-2022 --doys 1-366 --half-window 0 --inflate --repeats 3 --threads "$(nproc)"
  sync
  t events-gpu-$r "$X" "${EV[@]}" --output "$W/ev" --timing-json "$R/events-gpu-$r.json"
done
ls -la "$W/ev" >> "$S"
t events-cpu "$X" "${EV[@]}" --output "$W/ev-cpu" --backend cpu --timing-json "$R/events-cpu.json"
cmp0 "$W/ev" "$W/ev-cpu" events-gpu-vs-cpu
rm -rf "$W/ev-cpu"
# 4. one command: the climatology computed, then the events
t events-baseline "$X" events --input "$D" --years 1982-2022 --baseline 1983-2012 --overwrite --both --output-type f32 \
  --deflate 1 --output "$W/evb" --timing-json "$R/events-baseline.json"
cmp0 "$W/ev" "$W/evb" events-baseline-vs-climatology
rm -rf "$W/evb"
# 5. before issue 42 (default flags: its bands written through libnetcdf)
t events-before "$B" "${EV[@]}" --output "$W/ev-before"
cmp0 "$W/ev" "$W/ev-before" events-before-vs-after
free -g >> "$S"
