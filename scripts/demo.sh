#!/usr/bin/env bash
# Set-up command 1: install what is missing, build, and run the demo (the main job on a small
# generated dataset, checked against the reference engine, with quicklook maps).
# Usage: bash scripts/demo.sh [extra `sstclim demo` flags, e.g. --dir /tmp/demo]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install-deps.sh build   # no HIP compiler: the demo needs only the default build
cargo build --release --locked
exec target/release/sstclim demo "$@"
