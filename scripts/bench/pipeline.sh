#!/usr/bin/env bash
# End-to-end pipeline benchmark on a GPU node (issue 5): the full-size float64 job (3060 files
# of 1440x721, days 147..248 of 1991-2020) generated on the node, warm page cache.
#
#   SSTCLIM=.carry/sstclim scripts/bench/pipeline.sh OUTDIR [DATA_DIR] [BACKEND]
#
# Measures, in one script: the pure read floor (`sstclim bench-read`: every input byte read
# with pread from all threads, no decoding), end-to-end `sstclim run` (process wall time, three
# repeats, with the run report and the timeline), the same with the stages one after another
# (--segments 1), with the pool in pinned host memory (--gpu-pool host) instead of device
# memory, and the sequential reference (--read-path library --segments 1 --gpu-pool host;
# --write-path library; skipped with SKIP_LIBRARY=1), whose outputs the overlapped run must
# equal bitwise
# (`sstclim compare --tolerance 0`). `bench-read` needs a binary built with the `bench` feature
# (`cargo build --release --features netcdf-static,bench`).
set -euo pipefail
S=${SSTCLIM:-sstclim}
OUT=${1:?usage: scripts/bench/pipeline.sh OUTDIR [DATA_DIR] [BACKEND]}
DATA=${2:-/tmp/sstclim-bench/data}
BACKEND=${3:-cuda}
WORK=$(dirname "$DATA")
mkdir -p "$OUT" "$WORK"
. "$(dirname "$0")/cuda-env.sh"
JOB=(--input "$DATA" --baseline 1991-2020 --doys 152-243 --half-window 5)

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "cores: $(nproc)"
  free -g | head -2
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
  "$S" --version
} > "$OUT/machine.txt"

if [ ! -f "$DATA/.sstclim-dataset.json" ]; then
  /usr/bin/time -v "$S" -q generate --output "$DATA" --years 1991-2020 --doys 147-248 \
    > "$OUT/generate.out" 2> "$OUT/generate.err"
fi

# now: seconds since the epoch, with nanoseconds
now() { date +%s.%N; }
# run NAME FLAGS...: one timed `sstclim run` into $WORK/NAME; appends "NAME seconds" to e2e.txt
run() {
  local name=$1
  shift
  local t0 t1
  t0=$(now)
  "$S" -q run "${JOB[@]}" --output "$WORK/$name" --overwrite --backend "$BACKEND" \
    --timing-json "$OUT/$name.json" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  t1=$(now)
  echo "$name $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" | tee -a "$OUT/e2e.txt"
}

: > "$OUT/e2e.txt"
# warm the page cache and measure the floor (median of 5 passes after the first)
"$S" bench-read "${JOB[@]}" --repeats 1 > /dev/null
"$S" bench-read "${JOB[@]}" --repeats 5 --json "$OUT/read-floor.json" | tee "$OUT/read-floor.txt"

run warmup
for i in 1 2 3; do
  run "pipeline-$i" --trace-json "$OUT/trace-$i.json"
done
run host-pool --gpu-pool host --trace-json "$OUT/trace-host-pool.json"
run sequential-direct --segments 1 --gpu-pool host --trace-json "$OUT/trace-seq-direct.json"
reference=sequential-direct
if [ "${SKIP_LIBRARY:-0}" != 1 ]; then
  run sequential-library --read-path library --segments 1 --gpu-pool host --write-path library
  reference=sequential-library
fi
for other in host-pool "$reference"; do
  "$S" compare "$WORK/pipeline-3" "$WORK/$other" --tolerance 0 --json "$OUT/compare-$other.json" \
    > "$OUT/compare-$other.out" 2>&1 && echo "outputs equal bitwise: pipeline-3 vs $other" | tee -a "$OUT/e2e.txt" \
    || echo "OUTPUTS DIFFER: pipeline-3 vs $other" | tee -a "$OUT/e2e.txt"
done
echo done
