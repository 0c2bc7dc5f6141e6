# --smooth 31 against the plain job on the dev VM, before (main 6574159) and after (this branch),
# alternated in one script. Data: `sstclim generate --output $D --grid 360x181 --storage i16
# --years 1990-2011 --doys 1-366`. Usage: [YEARS=1991-2000] bench.sh BEFORE_BIN AFTER_BIN DATA WORKDIR REPEATS
set -u
B=$1 A=$2 D=$3 W=$4 N=${5:-3}
export SSTCLIM_RATES=none
job=(--input $D --years ${YEARS:-1991-2000} --doys 1-366 --calendar hobday366 --half-window 5 --percentile 90 --method 7
     --layout stacked --overwrite --segments 16)
mkdir -p $W/j
one() { # bin name repeat flags...
  local x=$1 v=$2 r=$3; shift 3
  $x --quiet run "${job[@]}" "$@" --output $W/o-$v --timing-json $W/j/$v-$r.json --trace-json $W/j/$v-$r-trace.json > $W/j/$v-$r.log 2>&1
  echo "$v $r rc=$? $(python3 - $W/j/$v-$r.json $W/j/$v-$r-trace.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); sp = json.load(open(sys.argv[2]))['spans']
ce = max(s['end'] for s in sp if s['stage'] == 'compute')
we = max(s['end'] for s in sp if s['stage'] in ('write', 'smooth', 'hold'))
tot = lambda st: sum(s['end'] - s['start'] for s in sp if s['stage'] == st)
print(f"wall {d['wall_seconds']:.2f} s compute-end {ce:.2f} last-write-end {we:.2f} tail {we - ce:.2f} s "
      f"hold {tot('hold'):.2f} smooth {tot('smooth'):.2f} write {tot('write'):.2f} s peak-rss {d['peak_rss_bytes'] / 1e9:.2f} GB")
PY
)"
}
for r in $(seq 1 $N); do
  one $B before-plain $r
  one $B before-smooth31 $r --smooth 31
  one $A after-plain $r
  one $A after-smooth31 $r --smooth 31
done
$A compare $W/o-before-smooth31 $W/o-after-smooth31 --tolerance 0 | tail -1
