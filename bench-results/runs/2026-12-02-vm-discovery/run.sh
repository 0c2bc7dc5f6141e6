#!/bin/bash
# Discovery time (the run report's "discover" stage: finding the files, their calendar and the
# sampled name/time-axis checks, and the first file's header) before and after the time-series
# discovery, on 10,958 daily OSTIA-like files with a time axis (1991-2020, 36x18), A/B
# alternated, 5 repeats each. Usage: run.sh BEFORE_BIN AFTER_BIN DATA_DIR
set -e
before=$1; after=$2; data=$3
work=$(mktemp -d)
for i in 1 2 3 4 5; do
  for which in before after; do
    bin=${!which}
    rm -rf "$work/out"
    # a cheap job over every file: one target day, windows over the whole year
    "$bin" -q run --input "$data" --output "$work/out" --years 1991-2020 --doys 1-366 --half-window 0 --layout stacked \
      --timing-json "$work/t.json" >/dev/null 2>&1 || { echo "$which failed"; exit 1; }
    python3 -c "import json,sys; t=json.load(open('$work/t.json')); print('$which', t['stage_seconds']['discover'])"
  done
done
rm -rf "$work"
