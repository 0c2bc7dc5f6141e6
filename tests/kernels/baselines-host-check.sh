#!/usr/bin/env bash
# Run kernels/bench/baselines.hip on the host (tests/kernels/baselines_host_check.cpp: every thread in
# turn, CUDA built-ins replaced by host equivalents) and check it against a naive reference: (a)
# and (b) bit for bit, (c) against the textbook Cornish-Fisher formula. For machines without a
# GPU; the GPU test (`cargo test baselines`) is the real check.
set -euo pipefail
. "$(dirname "$0")/host-check-common.sh"
${CXX:-g++} -std=c++17 -O1 -ffp-contract=off -Wno-unknown-pragmas -Ikernels/bench -Ikernels -o "$tmp/check" tests/kernels/baselines_host_check.cpp
"$tmp/check"
