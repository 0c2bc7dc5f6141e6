#!/usr/bin/env bash
# The cost of --smooth 31 on the whole year at 360x181 on the dev VM: the same job without and
# with it (and marineHeatWaves' whole climatology: extend, Feb 29 interpolated, smoothed),
# alternated A/B/C in one script, several repeats; wall times from --timing-json.
#   bench-results/runs/2026-12-02-vm-hobday/run.sh BIN WORKDIR REPEATS
set -euo pipefail
B=${1:-target/release/sstclim} W=${2:-/tmp/hobday-bench} R=${3:-3}
export SSTCLIM_RATES=none HDF5_USE_FILE_LOCKING=FALSE
mkdir -p "$W"
[ -d "$W/data" ] || "$B" -q generate --output "$W/data" --grid 360x181 --storage i16 --years 1990-2021 --doys 1-366
job=(--input "$W/data" --years 1991-2020 --doys 1-366 --calendar hobday366 --method 7 --percentile 10,90 --layout stacked --overwrite)
for r in $(seq "$R"); do
  for v in plain smooth31 mhw; do
    case $v in
      plain) extra=() ;;
      smooth31) extra=(--smooth 31) ;;
      mhw) extra=(--window-edges extend --feb29 interpolate --smooth 31) ;;
    esac
    "$B" -q run "${job[@]}" "${extra[@]}" --output "$W/out-$v" --timing-json "$W/$v-$r.json"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], round(d['wall_seconds'],2))" "$W/$v-$r.json" "$v" "$r"
  done
done
