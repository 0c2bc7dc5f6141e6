#!/usr/bin/env bash
# The pipeline on the CPU backend (issue 5): the overlapped pipeline (--segments R) against the
# sequential path (--segments 1) on the same dataset, alternating, REPEATS times each, with the
# run reports and one timeline per setting. Default dataset: 360x181 x 30 years x 102 days.
# COLD=1 evicts the dataset from the page cache before the read floor and before every run
# (scripts/bench/evict-page-cache.py), so files come from disk; otherwise the cache is warm.
# RATES=FILE lets the runs record measured rates there and adds, per round, a run without
# --segments (R chosen from those rates, reported as R=auto). `bench-read` needs a binary
# built with the `bench` feature (`cargo build --release --features bench`).
#
#   SSTCLIM=target/release/sstclim [COLD=1] [RATES=FILE] \
#     scripts/bench/pipeline-cpu.sh OUTDIR [DATA_DIR] [REPEATS] [R...]
set -euo pipefail
S=${SSTCLIM:-sstclim}
OUT=${1:?usage: scripts/bench/pipeline-cpu.sh OUTDIR [DATA_DIR] [REPEATS] [R...]}
DATA=${2:-/tmp/sstclim-cpu360/data}
REPEATS=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
SEGMENTS=("${@:-4}")
WORK=$(dirname "$DATA")
HERE=$(cd "$(dirname "$0")" && pwd)
evict() { if [ "${COLD:-0}" = 1 ]; then python3 "$HERE/evict-page-cache.py" "$DATA" >> "$OUT/evictions.txt"; fi; }
RATES_ARGS=(--rates "${RATES:-none}")
SETTINGS=(1 "${SEGMENTS[@]}")
if [ -n "${RATES:-}" ]; then SETTINGS+=(auto); fi
mkdir -p "$OUT"
if [ ! -f "$DATA/.sstclim-dataset.json" ]; then
  "$S" -q generate --output "$DATA" --grid 360x181 --years 1991-2020 --doys 147-248 > /dev/null
fi
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "cores: $(nproc)"
  echo "load: $(cat /proc/loadavg)"
  echo "page cache: $([ "${COLD:-0}" = 1 ] && echo "cold (evicted before every run)" || echo warm)"
  "$S" --version
} > "$OUT/machine.txt"
evict
"$S" bench-read --input "$DATA" --baseline 1991-2020 --doys 152-243 --repeats 3 --json "$OUT/read-floor.json" > "$OUT/read-floor.txt"
: > "$OUT/runs.txt"
for i in $(seq 1 "$REPEATS"); do
  for r in "${SETTINGS[@]}"; do
    # a fresh output directory: renaming over existing files makes ext4 flush them (~1 s)
    rm -rf "$WORK/out-r$r"
    SEG_ARGS=(--segments "$r")
    if [ "$r" = auto ]; then SEG_ARGS=(); fi
    evict
    t0=$(date +%s.%N)
    "$S" -q run --input "$DATA" --baseline 1991-2020 --doys 152-243 --backend cpu "${SEG_ARGS[@]}" "${RATES_ARGS[@]}" \
      --output "$WORK/out-r$r" --timing-json "$OUT/run-r$r-$i.json" --trace-json "$OUT/trace-r$r.json" > /dev/null
    t1=$(date +%s.%N)
    echo "R=$r repeat=$i $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s" | tee -a "$OUT/runs.txt"
  done
done
"$S" compare "$WORK/out-r1" "$WORK/out-r${SEGMENTS[0]}" --tolerance 0 > "$OUT/compare.txt" 2>&1 \
  && echo "outputs equal bitwise" | tee -a "$OUT/runs.txt"
echo "load after: $(cat /proc/loadavg)" >> "$OUT/machine.txt"
