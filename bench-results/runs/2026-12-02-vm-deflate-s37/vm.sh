#!/bin/bash
# In-job comparison on the dev VM: main at eff1671 (bin-before) against this branch (bin-after),
# alternating, 1440x721 int16 data of 1991-2020 days 1-20, days 6-15 (30 per-doy files),
# f32 --deflate 1 with the default write threads and with one.
# Data: sstclim generate --output data --grid 1440x721 --storage i16 --years 1991-2020 --doys 1-20
cd /tmp/h31
for r in 1 2 3; do
 for b in before after; do
  for t in 1 2; do
   RUST_LOG=sstclim=debug ./bin-$b -q run --input data --years 1991-2020 --doys 6-15 --percentile 10,90 --calendar hobday366 --output out-$b --overwrite --output-type f32 --deflate 1 --write-threads $t --timing-json vm-$b-$t-$r.json --trace-json vmtr-$b-$t-$r.json > vm-$b-$t-$r.log 2>&1
   echo "$r $b threads $t rc=$? $(python3 -c "
import json,collections; d=json.load(open('vm-$b-$t-$r.json')); s=d['stage_seconds']
sp=json.load(open('vmtr-$b-$t-$r.json'))['spans']; a=collections.defaultdict(float)
for x in sp: a[x['stage']]+=x['end']-x['start']
print('write', round(s['write'],2), 'wall', round(d['wall_seconds'],2), '| create', round(a['create-outputs'],2), 'write-spans', round(a['write'],2), 'sync', round(a['sync-outputs'],2))") $(du -sb out-$b | cut -f1) B | $(grep -h 'compressed write' vm-$b-$t-$r.log | sed -E 's/.*files, ([0-9.]+) MB -> ([0-9.]+) MB; encode\+compress ([0-9.]+) s.*/\1 \2 \3/' | awk '{printf "%.1f MB -> %.1f MB, encode+compress %.3f s = %.0f MB/s a thread", $1, $2, $3, $1/$3}')"
  done
 done
done
