# Issue 26, VM target: the deflated read stage (--segments 1, so it is not shared with computing)
# against the same dataset stored contiguously, and the readers' CPU seconds, for two binaries
# alternated (OLD: main before chunks were unshuffled straight into the pool's rows; NEW: after).
# Usage: bash run.sh OLD_BINARY NEW_BINARY WORKDIR REPEATS; writes results.txt beside itself.
set -u
OLD=$1 NEW=$2 W=$3 N=${4:-4} H=$(cd "$(dirname "$0")" && pwd)
G=(--grid 360x181 --years 2001-2010 --doys 147-248 --storage i16)
[ -d $W/z ] || $NEW --quiet generate --output $W/z "${G[@]}" --deflate 4 --shuffle --chunks 91x180
[ -d $W/c ] || $NEW --quiet generate --output $W/c "${G[@]}"
R=$H/results.txt; : > $R
J=(--years 2001-2010 --doys 152-243 --half-window 5 --percentile 90 --segments 1 --backend cpu)
split() { python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); t=r["span_totals"]; g=lambda k,f: t.get(k,{}).get(f) or 0
print("read-stage %.3f reader-busy %.3f reader-cpu %.3f files %d direct %d" % (r["stage_seconds"]["read"], g("read","seconds"), g("read","cpu_seconds"), r["files_read"], r["files_direct"]))' $1; }
for r in $(seq 1 $N); do
  for b in old new; do
    X=$OLD; [ $b = new ] && X=$NEW
    for d in z c; do
      $X --quiet run --input $W/$d --output $W/o "${J[@]}" --timing-json $W/t.json > /dev/null 2>&1
      echo "$r $b $d $(split $W/t.json)" | tee -a $R
      rm -rf $W/o
    done
  done
done
