#!/usr/bin/env bash
# Run the event kernel (kernels/events.hip) on the host, thread by thread, against the CPU scan
# bit for bit: the Rust test src/events/gpu/host_check.rs writes seeded bands (float32, float64
# and int16 pools; Gregorian, 360_day and noleap calendars; heatwaves and cold spells; gaps,
# all-missing cells, thresholds at or below the mean, events at the series' ends and longer
# than 128 days, events joined across gaps) to files, compiles
# tests/kernels/events_host_check.cpp with ${CXX:-g++}, runs it and compares its events and
# summaries with src/events/scan.rs's. Here a missing compiler fails (the test alone skips).
# For machines without a GPU; the GPU tests (test_each_backend!, cuda) are the real check.
set -euo pipefail
. "$(dirname "$0")/host-check-common.sh"
command -v "${CXX:-g++}" > /dev/null || { echo "no C++ compiler (${CXX:-g++})" >&2; exit 1; }
cargo test --release --locked --features bench,test-hooks --lib -- events::gpu::host_check 2>&1 | tee "$tmp/log"
grep -q "SKIPPED" "$tmp/log" && { echo "the host check was skipped" >&2; exit 1; }
grep -q "test result: ok. 1 passed" "$tmp/log"
