#!/usr/bin/env bash
# What issue 40's checks cost: main before (BASE) and after (NEW) on the reference job
# (360x181, 1991-2020, days 152-243, P90 type 5) from deflated int16 files with default flags,
# --read-path library and --read-path forked (where the chunk verdict decodes each chunk before
# libnetcdf does), and `events --baseline 2001-2010 --both` on a year-round deflated int16
# dataset; alternated, outputs compared bitwise.
#   BASE=sstclim-at-6ff3e8f NEW=sstclim-at-this-commit DATA=dir EVDATA=dir bash ab.sh > ab.log
# DATA:   sstclim generate --output DATA --grid 360x181 --years 1991-2020 --doys 147-248 \
#           --storage i16 --time-dim --deflate 4 --shuffle
# EVDATA: sstclim generate --output EVDATA --grid 360x181 --years 2001-2010 --doys 1-366 \
#           --storage i16 --time-dim --deflate 4 --shuffle
set -euo pipefail
: "${BASE:?}" "${NEW:?}" "${DATA:?}" "${EVDATA:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job() { # binary name extra-flags...
    local bin=$1 name=$2; shift 2
    rm -rf "$work/$name"
    local t0=$(date +%s.%N)
    "$bin" -q run --input "$DATA" --output "$work/$name" --years 1991-2020 --doys 152-243 \
        --percentile 90 --method 5 --rates none --timing-json "$work/$name.json" "$@" > /dev/null
    local t1=$(date +%s.%N)
    python3 - "$work/$name.json" "$name" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["stage_seconds"]
print(f"{sys.argv[2]:<16} wall {float(sys.argv[3]):6.2f} s   read/decode busy {s['read']:6.2f} s   discover {s['discover']:5.2f} s")
PY
}
echo "machine: $(nproc) cores, $(uname -r); date: $(date -u +%FT%TZ)"
for round in 1 2 3; do
    job "$BASE" base-auto
    job "$NEW" new-auto
done
for path in library forked; do
    for round in 1 2; do
        job "$BASE" base-$path --read-path $path
        job "$NEW" new-$path --read-path $path
    done
done
events() { # binary name
    rm -rf "$work/$2"
    local t0=$(date +%s.%N)
    "$1" -q events --input "$EVDATA" --output "$work/$2" --years 2001-2010 --baseline 2001-2010 --both > /dev/null
    printf '%-16s wall %6.2f s\n' "$2" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
for round in 1 2 3; do
    events "$BASE" base-events
    events "$NEW" new-events
done
"$NEW" compare "$work/base-events" "$work/new-events" --tolerance 0 | tail -1
for path in auto library forked; do
    "$NEW" compare "$work/base-$path" "$work/new-$path" --tolerance 0 | tail -1
done
