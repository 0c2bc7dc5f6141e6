#!/usr/bin/env bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Reproduce: bash bench-results/direct-write-2026-11-30-vm/run.sh [WORKDIR]
# (release build of sstclim first; writes *.json, *.txt and load.txt here)
set -euo pipefail
cd "$(dirname "$0")"
B=../../target/release/sstclim
W=${1:-$SCRATCH/sstclim-bench-write}
run() { # name, flags...
    local name=$1; shift
    echo "$(date -u +%H:%M:%S) $name: load $(cut -d' ' -f1-3 /proc/loadavg) before" >> load.txt
    echo "$B -q bench-write --dir $W $* --json $name.json" > "$name.cmd"
    "$B" -q bench-write --dir "$W" "$@" --json "$name.json" | tee "$name.txt"
    echo "$(date -u +%H:%M:%S) $name: load $(cut -d' ' -f1-3 /proc/loadavg) after" >> load.txt
}
: > load.txt
# the reference job's outputs: 184 per-doy files of 1440x721, one tile, 2 segments (the CPU default)
run perdoy-1tile --grid 1440x721 --doys 152-243 --tiles 1 --segments 2 --threads 1,2,4 --repeats 5
# the same in 3 bands of rows (as this VM's full-size run tiles it): the library path's fill shows
run perdoy-3tiles --grid 1440x721 --doys 152-243 --tiles 3 --segments 2 --threads 1,2,4 --repeats 3
# stacked: 2 files of 92 days
run stacked-1tile --grid 1440x721 --doys 152-243 --layout stacked --tiles 1 --segments 2 --threads 1,2,4 --repeats 3
rm -rf "$W"
