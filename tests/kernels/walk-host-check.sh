#!/usr/bin/env bash
# Run the climatology kernel's order-statistic search on the host
# (tests/kernels/walk_host_check.cpp) against the sorted union of seeded groups, as built and
# with the block size compiled in (SC_K_BC) as the CUDA backend does, and with the ring geometry
# compiled in too (SC_K_ROWS: heads then carry offsets, not slot and row).
# For machines without a GPU; the GPU engine tests are the real check.
set -euo pipefail
. "$(dirname "$0")/host-check-common.sh"
for defs in "" "-DSC_K_BC=5" "-DSC_K_BC=5 -DSC_K_ROWS=34"; do
    ${CXX:-g++} -std=c++17 -O1 -ffp-contract=off -Wno-unknown-pragmas $defs -Ikernels -o "$tmp/check" \
        tests/kernels/walk_host_check.cpp
    echo "walk host check ${defs:-(as built)}"
    "$tmp/check"
done
