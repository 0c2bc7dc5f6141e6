#!/usr/bin/env bash
# The GPU engine on a GPU node in one go: the engine tests (every test body on every backend,
# if a unit-test binary is given), then `sstclim bench-kernel` at 360x181 and at full size
# (1440x721 x 30 years x 102 days) with a float32 and a float64 pool, each checked bit for bit
# against the CPU engine on the same pool, beside the device's copy ceilings.
#
# Needs a binary built with the `bench` feature (`cargo build --release --features netcdf-static,bench`).
#
#   scripts/bench/gpu-kernel.sh [--bin PATH] [--tests PATH] [--out DIR] [--backend cuda|hip]
set -uo pipefail
bin=target/release/sstclim tests="" out=bench-out backend=cuda
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --backend) backend=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
. "$(dirname "$0")/cuda-env.sh"
status=0
{ date -u; uname -a; nproc; free -g | head -2; nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv 2>/dev/null; } | tee "$out/machine.txt"
if [ -n "$tests" ]; then
    timeout 300 "$tests" engine --test-threads 4 2>&1 | tee "$out/engine-tests.log" | grep -E "SKIPPED|test result|FAILED|panicked" || status=1
fi
run() {
    local name=$1; shift
    echo "== bench-kernel $name: $*"
    timeout 400 "$bin" bench-kernel --backend "$backend" --json "$out/$name.json" "$@" 2>&1 | tee "$out/$name.log" | grep -v "^bench: repeat" || status=1
}
run small-f32 --grid 360x181 --repeats 3 --verify
run full-f32 --repeats 5 --verify --f64-error
run full-f64 --pool f64 --repeats 2 --verify --probe-bytes 4GB
exit $status
