# VM measurements of issue 26 point 4 (stop 37): the 92-day job (days 152-243, h = 5, P90,
# --segments 1) on 10 years x 102 days of deflated int16 720x361 files (1,020 files, 4 chunks
# each), --read-path forked --readers 1 and 2 against --read-path library, before (main at
# eff1671) and after (s37-h34), alternating x3. Usage: bash vm.sh BEFORE_BINARY AFTER_BINARY
set -u
B=$1 A=$2 D=/tmp/h34z R=/tmp/h34vm; mkdir -p $R
[ -d $D ] || $A --quiet generate --output $D --grid 720x361 --years 2001-2010 --storage i16 --doys 147-248 --deflate 4 --shuffle --chunks 181x360
J=(--years 2001-2010 --doys 152-243 --half-window 5 --percentile 90 --segments 1)
cpu() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r=resource.getrusage(resource.RUSAGE_CHILDREN); print("wall %.2f cpu %.2f" % (time.time()-t, r.ru_utime+r.ru_stime))' "$@"; }
summ() { python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); t=r["span_totals"]; g=lambda k,f="seconds": (t.get(k,{}).get(f) or 0.0)
print("read %.2f | fork %d %.3f s | child-file %.2f cpu %.2f open %.2f read %.2f decode %.2f" % (r["stage_seconds"]["read"], t.get("fork",{}).get("count",0), g("fork"), g("child-file"), g("child-file","cpu_seconds"), g("child-open"), g("child-read"), g("child-decode")))' "$1"; }
for r in 1 2 3; do
  for bin in before after; do X=$B; [ $bin = after ] && X=$A
    for v in "forked --readers 1" "forked --readers 2" "library"; do
      n="$bin-$(echo $v | tr -d ' -')-$r"
      c=$(cpu $X --quiet run --input $D "${J[@]}" --output $R/o --timing-json $R/$n.json --read-path $v)
      echo "$n: $c; $(summ $R/$n.json)"; rm -rf $R/o
    done
  done
done
