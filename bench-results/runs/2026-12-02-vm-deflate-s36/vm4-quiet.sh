#!/bin/bash
# issue 28's VM target on a quieter VM (no helpers building; run after CI ended): the merged
# tree's binary only, f64 and --deflate 4 alternating, 4 repeats; data as vm4.sh (d64)
X=${X:-/work/main/target/release/sstclim}
cd /tmp/h28
for r in 1 2 3 4; do
  for f in f64 z4; do
   Z=""; [ $f = z4 ] && Z="--deflate 4"
   RUST_LOG=sstclim=debug $X -q run --input d64 --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --segments 1 --overwrite --output q-$f $Z --timing-json q-$f-$r.json --trace-json qtr-$f-$r.json > q-$f-$r.log 2>&1
   echo "$r $f rc=$? $(python3 -c "
import json,collections; d=json.load(open('q-$f-$r.json')); s=d['stage_seconds']
sp=json.load(open('qtr-$f-$r.json'))['spans']; a=collections.defaultdict(float)
for x in sp: a[x['stage']]+=x['end']-x['start']
print('write', round(s['write'],2), 'wall', round(d['wall_seconds'],2), '| create', round(a['create-outputs'],2), 'write-spans', round(a['write'],2), 'sync', round(a['sync-outputs'],2))") $(du -sb q-$f | cut -f1) B"
  done
done
