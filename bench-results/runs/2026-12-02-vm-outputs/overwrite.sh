#!/usr/bin/env bash
# What replacing a job's previous outputs costs (--overwrite) against writing into a fresh
# directory: the 360x181 job (float64, per-doy, 184 files), alternating, with the stage times
# and the trace's spans; the fresh directory is removed (and synced) outside the timings.
# Usage: overwrite.sh SSTCLIM DATA_DIR WORK_DIR [REPEATS]
set -euo pipefail
B=$1 DATA=$2 W=$3 R=${4:-3}
mkdir -p "$W"
JOB=(--input "$DATA" --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --segments 1)
"$B" -q run "${JOB[@]}" --output "$W/replaced" --overwrite > /dev/null
for r in $(seq 1 "$R"); do
  rm -rf "$W/fresh"; sync
  s=$(date +%s.%N); "$B" -q run "${JOB[@]}" --output "$W/fresh" --timing-json "$W/fresh-$r.json" --trace-json "$W/tfresh-$r.json" > /dev/null
  echo "fresh $r wall $(awk -v a=$s -v b=$(date +%s.%N) 'BEGIN{print b-a}')" >> "$W/walls.txt"
  sync
  s=$(date +%s.%N); "$B" -q run "${JOB[@]}" --output "$W/replaced" --overwrite --timing-json "$W/over-$r.json" --trace-json "$W/tover-$r.json" > /dev/null
  echo "overwrite $r wall $(awk -v a=$s -v b=$(date +%s.%N) 'BEGIN{print b-a}')" >> "$W/walls.txt"
  sync
done
cat "$W/walls.txt"
python3 - "$W" "$R" <<'PY'
import json, sys
w, r = sys.argv[1], int(sys.argv[2])
for kind, t in (("fresh", "tfresh"), ("overwrite", "tover")):
    for i in range(1, r + 1):
        st = json.load(open(f"{w}/{'fresh' if kind == 'fresh' else 'over'}-{i}.json"))
        d = json.load(open(f"{w}/{t}-{i}.json"))
        ev = d if isinstance(d, list) else d.get("events", d.get("spans", []))
        sp = {}
        for e in ev:
            if isinstance(e, dict) and "stage" in e:
                sp[e["stage"]] = sp.get(e["stage"], 0) + e["end"] - e["start"]
        print(kind, i, "write stage", round(st["stage_seconds"]["write"], 2), "wall", round(st["wall_seconds"], 2),
              {k: round(v, 2) for k, v in sp.items() if k in ("create-outputs", "locate", "write", "sync-outputs", "publish")})
PY
