#!/usr/bin/env bash
# Set-up command 2: install what is missing and run every test (unit, decoding against the
# netCDF4-python fixtures, end-to-end on generated data, bad input, and the 360x181 check).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install-deps.sh
cargo test --release --locked --all-targets
