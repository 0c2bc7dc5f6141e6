#!/bin/bash
# full-year 360x181 per-doy job (1,098 files): f32 vs f32 --deflate 1, before vs after, alternating
cd /tmp/h28
for r in 1 2; do
 for b in before after; do
  for f in f32 z1; do
   X=""; [ $f = z1 ] && X="--deflate 1"
   RUST_LOG=sstclim=debug ./bin-$b -q run --input data --years 2001-2010 --doys 1-366 --percentile 10,90 --calendar hobday366 --output out-$b-$f --overwrite --output-type f32 $X --timing-json fy-$b-$f-$r.json --trace-json fytr-$b-$f-$r.json > fy-$b-$f-$r.log 2>&1
   echo "$r $b $f rc=$? $(python3 -c "
import json,collections; d=json.load(open('fy-$b-$f-$r.json')); s=d['stage_seconds']
sp=json.load(open('fytr-$b-$f-$r.json'))['spans']; a=collections.defaultdict(float)
for x in sp: a[x['stage']]+=x['end']-x['start']
print('write', round(s['write'],2), 'wall', round(d['wall_seconds'],2), '| create', round(a['create-outputs'],2), 'write-spans', round(a['write'],2), 'sync', round(a['sync-outputs'],2))") $(du -sb out-$b-$f | cut -f1) B"
   grep -h "compressed write" fy-$b-$f-$r.log | sed 's/.*compressed write/   /'
  done
 done
done
