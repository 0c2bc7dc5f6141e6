#!/usr/bin/env bash
# The full-size job end to end on a GPU node: generate the reference-size float64 dataset
# (1440x721, 1991-2020, days 147-248: 3060 files, 25 GB), run it with the GPU engine (float32
# pool by default), with the CPU engine on the same float32 pool and with the CPU engine on a
# float64 pool, then compare: GPU against CPU on the same pool must be bitwise equal; against
# float64 the difference is the float32 pool's error.
#
#   scripts/bench/gpu-run.sh [--bin PATH] [--work DIR] [--out DIR] [--backend cuda|hip]
set -uo pipefail
bin=target/release/sstclim work=/tmp/sstclim-gpu-run out=bench-out backend=cuda
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --backend) backend=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$out" "$work"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
export HDF5_USE_FILE_LOCKING=FALSE
status=0
step() {
    local name=$1; shift
    echo "== $name: $*"
    { /usr/bin/time -v "$@" ; } > "$out/$name.out" 2> "$out/$name.err" || status=1
    grep -E "Elapsed|Maximum resident" "$out/$name.err" | sed 's/^\s*/   /'
    tail -n 25 "$out/$name.out"
}
step generate "$bin" --quiet generate --output "$work/data"
job=(--input "$work/data" --baseline 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --overwrite)
step run-gpu "$bin" --quiet run "${job[@]}" --output "$work/gpu" --backend "$backend" --timing-json "$out/run-gpu.json"
step run-cpu-f32 "$bin" --quiet run "${job[@]}" --output "$work/cpu-f32" --backend cpu --pool f32 --timing-json "$out/run-cpu-f32.json"
step compare-same-pool "$bin" compare "$work/gpu" "$work/cpu-f32" --json "$out/compare-same-pool.json"
step run-cpu-f64 "$bin" --quiet run "${job[@]}" --output "$work/cpu-f64" --backend cpu --pool f64 --timing-json "$out/run-cpu-f64.json"
step compare-vs-f64 "$bin" compare "$work/gpu" "$work/cpu-f64" --tolerance 1e-5 --json "$out/compare-vs-f64.json"
exit $status
