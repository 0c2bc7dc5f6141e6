#!/usr/bin/env bash
# Run the whole climatology kernel on the host (tests/kernels/kernel_host_check.cpp), thread
# by thread, over a seeded job with missing values, and compare every output with a naive
# reference bit for bit: float32 and float64 pools, as HIP builds it (constants from the
# arguments) and as the CUDA backend compiles it for the job (-DSC_K_...: offset entries,
# sentinel rows written once, streaming stores of cold rows, no barrier for float32), the ring
# in device or shared memory,
# groups of 30, 7 and 40 years (more than 32: sorted in place in the ring), the 12-group kernel
# on an 11-day window, two percentiles, and int16 pools decoded through a table (ordered: the
# integers as keys; reversed: the generic int16 kernel).
# For machines without a GPU; the GPU engine tests are the real check.
set -euo pipefail
. "$(dirname "$0")/host-check-common.sh"
spec() {  # the CUDA backend's launch constants for this job (src/engine/gpu/spec.rs)
    local years=$1 stride=$2 glen_rows hot
    glen_rows="-DSC_K_GLEN=$years -DSC_K_ROWS=$((years + 2))"
    hot=""
    [ "$years" = 30 ] && hot="-DSC_K_HOT_LO=24 -DSC_K_HOT_HI=31"
    echo "-DSC_K_BC=64 -DSC_K_RING=11 -DSC_K_NPCT=1 -DSC_K_RING_GLOBAL=1 -DSC_K_HINTS=1 -DSC_K_POOL_STRIDE=$stride -DSC_K_NL=11 $glen_rows $hot"
}
run() {
    local name=$1 kernel=$2 sample=$3
    shift 3
    ${CXX:-g++} -std=c++17 -O1 -ffp-contract=off -Wno-unknown-pragmas -DSC_SELECT "-DSC_WANT_$kernel" \
        "-DKERNEL=$kernel" "-DSAMPLE=$sample" "$@" -Ikernels -Itests/kernels -o "$tmp/check" tests/kernels/kernel_host_check.cpp
    printf '%-34s ' "$name"
    timeout 300 "$tmp/check"
}
run "float32, generic" sstclim_clim_f32_l11 float
run "float32, compiled for the job" sstclim_clim_f32_l11 float $(spec 30 307)
run "float64, generic" sstclim_clim_f64_l11 double
run "float64, compiled for the job" sstclim_clim_f64_l11 double $(spec 30 307)
run "float32, ring in shared memory" sstclim_clim_f32_l11 float -DRING_GLOBAL=0
run "float32, shared ring, compiled" sstclim_clim_f32_l11 float -DRING_GLOBAL=0 $(spec 30 307 | sed 's/SC_K_RING_GLOBAL=1/SC_K_RING_GLOBAL=0/; s/-DSC_K_HOT_LO=24 -DSC_K_HOT_HI=31//')
run "float32, 7 years, generic" sstclim_clim_f32_l11 float -DYEARS=7
run "float32, 7 years, compiled" sstclim_clim_f32_l11 float -DYEARS=7 $(spec 7 307)
run "float32, 12-group kernel" sstclim_clim_f32_l12 float -DMAXL_K=12
run "float64, 40 years (long groups)" sstclim_clim_f64_l11 double -DYEARS=40
run "float32, P10 and P90" sstclim_clim_f32_l11 float -DNPCT=2
run "float32, P10 and P90, compiled" sstclim_clim_f32_l11 float -DNPCT=2 $(spec 30 307 | sed 's/SC_K_NPCT=1/SC_K_NPCT=2/; s/-DSC_K_HOT_LO=24 -DSC_K_HOT_HI=31/-DSC_K_HOT_LO=0 -DSC_K_HOT_HI=31/')
run "int16, ordered table, generic" sstclim_clim_i16o_l11 short -DINT16 -DPOLICY=sc_i16_ordered
run "int16, ordered table, compiled" sstclim_clim_i16o_l11 short -DINT16 -DPOLICY=sc_i16_ordered $(spec 30 307)
run "int16, 40 years, ordered table" sstclim_clim_i16o_l11 short -DINT16 -DPOLICY=sc_i16_ordered -DYEARS=40
run "int16, reversed table (generic)" sstclim_clim_i16_l11 short -DINT16 -DSCALE=-0.01
run "int16, 40 years, reversed table" sstclim_clim_i16_l11 short -DINT16 -DSCALE=-0.01 -DYEARS=40
