#!/usr/bin/env bash
# Our GPU kernel against the source documents' GPU designs (kernels/bench/baselines.hip), on a GPU
# node in one go: machine and software versions, the baselines' GPU test (if a unit-test binary
# is given), a small run checked bit for bit against the CPU engine, then the full-size run
# (1440x721 x 30 years x 102 days, float32) with every value of ours checked against the CPU
# engine. Writes into DIR: machine.txt, results.json, results.md (the markdown table), logs.
# Plot afterwards, anywhere with matplotlib: scripts/bench/baselines-plot.py DIR
# Needs a binary built with the `bench` feature (`cargo build --release --features netcdf-static,bench`).
#
#   scripts/bench/gpu-baselines.sh [--bin PATH] [--tests PATH] [--out DIR] [--device N] [-- EXTRA FLAGS]
set -uo pipefail
bin=target/release/sstclim tests="" out=bench-baselines-out device=0
extra=()
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --device) device=$2; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
. "$(dirname "$0")/cuda-env.sh"
status=0
{
    date -u
    uname -a
    echo "cpus: $(nproc)"
    free -g | head -2
    nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv 2>/dev/null
    nvidia-smi 2>/dev/null | grep -o "CUDA Version: [0-9.]*"
    ls -l "$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libnvrtc.so[^ ]*' | head -1)" 2>/dev/null
    for d in ${LD_LIBRARY_PATH//:/ }; do ls "$d"/libnvrtc.so.* 2>/dev/null; done | head -3
    "$bin" --version
    git rev-parse HEAD 2>/dev/null
} 2>&1 | tee "$out/machine.txt"
if [ -n "$tests" ]; then
    timeout 300 "$tests" baselines --test-threads 1 2>&1 | tee "$out/tests.log" | grep -E "SKIPPED|test result|FAILED|panicked" || status=1
fi
echo "== small: 360x181, every value of ours checked"
timeout 300 "$bin" bench-baselines --device "$device" --grid 360x181 --repeats 3 --verify --tblock-tiles 16,32 \
    --json "$out/small.json" --markdown "$out/small.md" "${extra[@]}" 2>&1 | tee "$out/small.log" | grep -v "repeat [0-9]" || status=1
echo "== full size: 1440x721 x 30 years x 102 days"
timeout 540 "$bin" bench-baselines --device "$device" --repeats 5 --verify --tblock-tiles 16,32 \
    --json "$out/results.json" --markdown "$out/results.md" "${extra[@]}" 2>&1 | tee "$out/full.log" | grep -v "repeat [0-9]" || status=1
exit $status
