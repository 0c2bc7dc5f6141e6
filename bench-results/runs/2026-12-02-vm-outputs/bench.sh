#!/usr/bin/env bash
# The 360x181 job's write stage by output form, alternating forms within each repeat (this
# VM's timings vary by +-15 %), with the write floor for the same files, and the error of the
# float32 and int16 outputs against float64. The report's write stage counts from the start of
# the tile, so it includes waiting for the process that creates the output files while the
# inputs are read ("create-outputs"); the trace's write and sync-outputs spans are the writing
# itself (encoding, compressing, pwrite/H5Dwrite_chunk, fsync), reported beside it.
# Usage: bench.sh SSTCLIM DATA_DIR WORK_DIR [REPEATS]
#   DATA_DIR: sstclim generate --grid 360x181 --years 1991-2020 --doys 147-248
set -euo pipefail
B=$1 DATA=$2 W=$3 R=${4:-4}
mkdir -p "$W"
JOB=(--input "$DATA" --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --segments 1 --overwrite)
declare -A FORM=(
  [f64]=""
  [f64-deflate4]="--deflate 4"
  [f32]="--output-type f32"
  [f32-deflate1]="--output-type f32 --deflate 1"
  [i16]="--output-type i16 --output-scale 0.001"
)
ORDER=(f64 f64-deflate4 f32 f32-deflate1 i16)
for r in $(seq 1 "$R"); do
  for f in "${ORDER[@]}"; do
    # shellcheck disable=SC2086
    "$B" -q run "${JOB[@]}" --output "$W/out-$f" ${FORM[$f]} --timing-json "$W/$f-$r.json" --trace-json "$W/trace-$f-$r.json" > /dev/null
    sync
    "$B" bench-write-floor --like "$W/out-$f" --dir "$W/floor" --repeats 1 --json "$W/floor-$f-$r.json" > /dev/null
  done
done
python3 - "$W" "$R" "${ORDER[@]}" <<'PY'
import json, os, sys
w, r, forms = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(p): return json.load(open(os.path.join(w, p)))
print(f"{'form':<14}{'write stage s (runs)':<24}{'median':>8}{'write+sync spans s (runs)':<30}{'median':>8}{'create s':>9}{'MB':>8}{'floor s':>9}")
med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(xs)[len(xs)//2-1:len(xs)//2+1]) / 2
def spans(p, names):
    d = load(p)
    ev = d if isinstance(d, list) else d.get("events", d.get("spans", []))
    return sum(e["end"] - e["start"] for e in ev if isinstance(e, dict) and e.get("stage") in names)
rows = {}
for f in forms:
    ws = [load(f"{f}-{i}.json")["stage_seconds"]["write"] for i in range(1, r + 1)]
    sp = [spans(f"trace-{f}-{i}.json", ("write", "sync-outputs")) for i in range(1, r + 1)]
    cr = [spans(f"trace-{f}-{i}.json", ("create-outputs",)) for i in range(1, r + 1)]
    fl = [load(f"floor-{f}-{i}.json")["median_seconds"] for i in range(1, r + 1)]
    mb = sum(os.path.getsize(os.path.join(w, f"out-{f}", n)) for n in os.listdir(os.path.join(w, f"out-{f}"))) / 1e6
    rows[f] = (ws, med(ws), mb, med(fl), sp, med(sp))
    print(f"{f:<14}{', '.join(f'{x:.2f}' for x in ws):<24}{med(ws):>8.2f}  {', '.join(f'{x:.2f}' for x in sp):<28}{med(sp):>8.2f}{med(cr):>9.2f}{mb:>8.1f}{med(fl):>9.2f}")
b = rows["f64"]
for f in forms[1:]:
    print(f"{f}: write stage {rows[f][1] / b[1]:.2f}x f64's (per repeat "
          f"{', '.join(f'{x / y:.2f}' for x, y in zip(rows[f][0], b[0]))}); write+sync spans {rows[f][5] / b[5]:.2f}x (per repeat "
          f"{', '.join(f'{x / y:.2f}' for x, y in zip(rows[f][4], b[4]))}); {rows[f][2] / b[2] * 100:.0f} % of the bytes; "
          f"write+sync {rows[f][5] / rows[f][3]:.2f}x its floor")
PY
# errors against float64 (sstclim compare: max |a-b| per variable)
for f in f32 f32-deflate1 i16; do
  echo "== compare f64 $f"
  "$B" compare "$W/out-f64" "$W/out-$f" --tolerance 1 || true
done
