# Issue 26 (b, c) on the 2-core dev VM: where the read stage of a deflated job goes against the
# parallel-inflate floor, in processor time (load-independent: the VM is shared) as well as wall:
#  - bench-read --inflate: wall and the process's CPU seconds (getrusage of the child);
#  - the read stage of the 92-day job (--segments 1, --backend cpu): wall (extent), the reader
#    threads' busy seconds and CPU seconds (span_totals of the run report: read, locate);
#  - (point 4) the reader-process fallback: --read-path library (one libnetcdf reader in the
#    process) and --read-path forked with 1 and 2 readers, children counted every 0.05 s, and
#    the children's CPU seconds.
# Alternating, 3 repeats. Usage: bash run.sh SSTCLIM_BINARY WORKDIR (WORKDIR/z: the deflated
# dataset, made here if missing); writes results.txt and *.json beside itself.
set -u
X=$1 W=$2 H=$(cd "$(dirname "$0")" && pwd)
G=(--grid 360x181 --years 2001-2010 --doys 147-248 --storage i16)
[ -d $W/z ] || $X --quiet generate --output $W/z "${G[@]}" --deflate 4 --shuffle --chunks 91x180
R=$H/results.txt; : > $R
# run a command, print "wall user+sys(self+children)"
cpu() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r=resource.getrusage(resource.RUSAGE_CHILDREN); print("wall %.3f cpu %.3f" % (time.time()-t, r.ru_utime+r.ru_stime))' "$@"; }
J=(--years 2001-2010 --doys 152-243 --half-window 5 --percentile 90 --segments 1 --backend cpu)
split() { python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); t=r["span_totals"]; g=lambda k,f: t.get(k,{}).get(f) or 0
print("read-stage %.3f  reader busy %.3f cpu %.3f  locate busy %.3f cpu %.3f  files %d direct %d" % (r["stage_seconds"]["read"], g("read","seconds"), g("read","cpu_seconds"), g("locate","seconds"), g("locate","cpu_seconds"), r["files_read"], r["files_direct"]))' $1; }
for r in 1 2 3; do
  echo "floor-inflate $r: $(cpu $X bench-read --input $W/z --years 2001-2010 --doys 152-243 --half-window 5 --inflate --repeats 1)  (includes discovery)" >> $R
  echo "discovery-only $r: $(cpu $X bench-read --input $W/z --years 2001-2010 --doys 152-243 --half-window 5 --repeats 1)  (plain read of the deflated files)" >> $R
  $X --quiet run --input $W/z --output $W/o-z "${J[@]}" --timing-json $H/z-$r.json > /dev/null 2>&1
  echo "job $r: $(split $H/z-$r.json)" >> $R; rm -rf $W/o-z
done
# point 4: the fallback
count() { ( while sleep 0.05; do pgrep -c -f "$X --quiet run"; done ) > $H/children-$1.txt & CP=$!; }
for r in 1 2; do
  for p in "library" "forked 1" "forked 2"; do
    set -- $p; name=$1${2:-}
    count $name-$r
    t=$(cpu $X --quiet run --input $W/z --output $W/o-f "${J[@]}" --read-path $1 ${2:+--readers $2} --timing-json $H/$name-$r.json)
    kill $CP
    echo "fallback $name $r: $t  read-stage $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stage_seconds"]["read"])' $H/$name-$r.json)  max processes $(sort -n $H/children-$name-$r.txt | tail -1)" >> $R
    rm -rf $W/o-f
  done
done
