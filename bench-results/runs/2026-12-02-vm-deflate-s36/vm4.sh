#!/bin/bash
# issue 28's VM target: 360x181 job, --segments 1, write stage with --deflate 4 against without;
# before (main 8271ee6) and after (s36-h28), alternating
cd /tmp/h28
for r in 1 2 3; do
 for b in before after; do
  for f in f64 z4; do
   X=""; [ $f = z4 ] && X="--deflate 4"
   RUST_LOG=sstclim=debug ./bin-$b -q run --input d64 --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --segments 1 --overwrite --output v-$b-$f $X --timing-json v-$b-$f-$r.json --trace-json vtr-$b-$f-$r.json > v-$b-$f-$r.log 2>&1
   echo "$r $b $f rc=$? $(python3 -c "
import json,collections; d=json.load(open('v-$b-$f-$r.json')); s=d['stage_seconds']
sp=json.load(open('vtr-$b-$f-$r.json'))['spans']; a=collections.defaultdict(float)
for x in sp: a[x['stage']]+=x['end']-x['start']
print('write', round(s['write'],2), 'wall', round(d['wall_seconds'],2), '| create', round(a['create-outputs'],2), 'write-spans', round(a['write'],2), 'sync', round(a['sync-outputs'],2))") $(du -sb v-$b-$f | cut -f1) B $(grep -h 'compressed write' v-$b-$f-$r.log | sed 's/.*MB; encode+compress \([0-9.]*\) s.*/compress \1 core-s/')"
  done
 done
done
