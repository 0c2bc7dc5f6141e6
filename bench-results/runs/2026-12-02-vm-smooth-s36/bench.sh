# --smooth 31 against the plain job on the dev VM, before (main 8271ee6) and after (s36-h29),
# alternated in one script, at the default segments and at --segments 16 (the H200's default).
# Data: `sstclim generate --output $D --grid 360x181 --storage i16 --years 1991-2000 --doys 1-366`.
# Usage: bench.sh BEFORE_BIN AFTER_BIN DATA WORKDIR REPEATS
set -u
B=$1 A=$2 D=$3 W=$4 N=${5:-3}
export SSTCLIM_RATES=none
job=(--input $D --years 1991-2000 --doys 1-366 --calendar hobday366 --half-window 5 --percentile 90 --method 7
     --layout stacked --overwrite)
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
segs = len({s.get('batch') for s in sp if s['stage'] == 'compute'})
print(f"wall {d['wall_seconds']:.2f} s compute-end {ce:.2f} last-write-end {we:.2f} tail {we - ce:.2f} s "
      f"smooth {tot('smooth'):.2f} write {tot('write'):.2f} s segments {segs} peak-rss {d['peak_rss_bytes'] / 1e9:.2f} GB")
PY
)"
}
for r in $(seq 1 $N); do
  for s in default 16; do
    seg=(); [ $s = default ] || seg=(--segments $s)
    one $B before-plain-$s $r "${seg[@]}"
    one $B before-smooth31-$s $r --smooth 31 "${seg[@]}"
    one $A after-plain-$s $r "${seg[@]}"
    one $A after-smooth31-$s $r --smooth 31 "${seg[@]}"
  done
done
for s in default 16; do
  echo "compare smooth31 before/after, segments $s: $($A compare $W/o-before-smooth31-$s $W/o-after-smooth31-$s --tolerance 0 2>&1 | tail -1)"
  echo "compare plain before/after, segments $s: $($A compare $W/o-before-plain-$s $W/o-after-plain-$s --tolerance 0 2>&1 | tail -1)"
done
echo "compare after smooth31 default / 16: $($A compare $W/o-after-smooth31-default $W/o-after-smooth31-16 --tolerance 0 2>&1 | tail -1)"
