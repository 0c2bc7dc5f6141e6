#!/usr/bin/env bash
# What publishing outputs durably costs on a node's disk: the reference job end to end
# (1440x721 int16 OSTIA-like input, 1991-2020, days 152-243, GPU engine) with a binary from
# before all-or-nothing publishing (outputs renamed into place, never fsynced) and one after it
# (every output fsynced, then moved into place), alternating, into fresh directories on the
# node's disk, each run starting from a clean page cache of dirty pages (`sync` before it);
# then the new binary replacing its own outputs (--overwrite); the outputs of both binaries
# compared bitwise. Writes summary.md beside the raw reports.
#
#   scripts/bench/publish.sh --old BIN --new BIN [--work DIR] [--out DIR] [--rounds N] [--backend B]
set -uo pipefail
old="" new="" work=/tmp/sstclim-publish out=bench-out rounds=2 backend=cuda
while (($#)); do
    case $1 in
        --old) old=$2; shift 2 ;;
        --new) new=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --backend) backend=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$old" ] && [ -n "$new" ] || { echo "--old and --new are required" >&2; exit 2; }
mkdir -p "$out" "$work"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    uname -a
    nproc
    free -g | head -2
    df -h "$work" | tail -1
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
    echo "old: $old ($("$old" --version 2>/dev/null))"
    echo "new: $new ($("$new" --version 2>/dev/null))"
} > "$out/machine.txt"
status=0
if [ ! -f "$work/data/.complete" ]; then
    start=$(date +%s.%N)
    "$new" --quiet generate --output "$work/data" --storage i16 || status=1
    touch "$work/data/.complete"
    echo "generate: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }') s" >> "$out/machine.txt"
fi
job=(--input "$work/data" --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --backend "$backend")
# warm the inputs' page cache once (both binaries read the same files)
"$new" --quiet run "${job[@]}" --output "$work/warm" --overwrite > /dev/null || status=1
one() { # name binary outdir [flags]
    local name=$1 bin=$2 dir=$3; shift 3
    sync
    sleep 1
    local start end
    start=$(date +%s.%N)
    "$bin" --quiet run "${job[@]}" --output "$dir" --timing-json "$out/$name.json" "$@" > "$out/$name.out" 2> "$out/$name.err" || status=1
    end=$(date +%s.%N)
    echo "$name $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" | tee -a "$out/walls.txt"
}
for r in $(seq 1 "$rounds"); do
    rm -rf "$work/old" "$work/new"
    sync
    one "old-$r" "$old" "$work/old"
    one "new-$r" "$new" "$work/new"
done
one "new-overwrite" "$new" "$work/new" --overwrite
"$new" compare "$work/old" "$work/new" --tolerance 0 --json "$out/compare.json" > "$out/compare.txt" 2>&1 || status=1
tail -n 5 "$out/compare.txt"
python3 - "$out" <<'EOF' || status=1
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
walls = dict(line.split() for line in (out / "walls.txt").read_text().splitlines())
rows = []
for name in sorted(walls, key=lambda n: (n.split("-")[-1], n)):
    r = json.loads((out / f"{name}.json").read_text())
    st = r["stage_seconds"]
    get = lambda k: st.get(k, 0.0) if isinstance(st, dict) else 0.0
    rows.append(f"| {name} | {float(walls[name]):.2f} | {r['wall_seconds']:.2f} | {get('read'):.2f} | {get('write'):.2f} | {r['outputs']} |")
text = ["| run | process wall s | report wall s | read s | write s (incl. fsync for new) | outputs |", "|---|---|---|---|---|---|"] + rows
(out / "summary.md").write_text("\n".join(text) + "\n")
print("\n".join(text))
EOF
exit $status
