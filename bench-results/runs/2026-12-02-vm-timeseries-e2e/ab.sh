
# Issue 27, dev VM: the 360x181 full-year job from 10 yearly files against 3,652 daily files
# (same values, int16 deflate 4 + shuffle, one chunk a step), alternated, warm page cache.
set -u
B=${B:-target/release/sstclim}
cd "$(dirname "$0")"
cat daily/* yearly/* > /dev/null
for r in 0 1 2 3; do for set in daily yearly; do
  $B -q run --input $set --output out-$set --years 2001-2010 --doys 1-366 --percentile 10,90 --overwrite \
     --timing-json t-$set-$r.json > /dev/null 2>&1
  echo "$set $r rc=$? $(python3 -c "
import json; d = json.load(open('t-$set-$r.json')); s = d['stage_seconds']
print('wall', round(d['wall_seconds'], 2), 'read', round(s['read'], 2), 'compute', round(s['compute'], 2), 'write', round(s['write'], 2), 'direct', d['files_direct'], 'library', d['files_library'])")"
done; done
$B compare out-daily out-yearly | tail -1
