# Issue 28's write targets on the H200 node after s36-h28: level-1 chunks coded with runs and a
# Huffman code per byte plane (src/output/rle_deflate.rs) and the output files created by
# several forked processes. Modelled on ../2026-12-02-h200-deflate-threads/call.sh, but
# self-contained: generates its data (1440x721 int16, 1991-2020, days 1-366, ~30 s).
# Job: `run --years 1991-2020 --doys 1-366 --percentile 10,90 --calendar hobday366`, per-doy
# outputs (1,098 files) on the node's disk, f32 and f32 `--deflate 1` alternated three times,
# each followed by the write floor of its bytes (`bench-write-floor --like`);
# RUST_LOG=sstclim=debug keeps the compressed writer's accounting, --trace-json the split
# (create-outputs, write, sync-outputs). Then the compression rate of one core: the same job on
# days 1-31 with `--write-threads 1` (point 3: cores x that rate against the floor).
# Run (one call, carry [".carry"] holding bins.tar.xz of the merged tree's static sstclim):
#   bash bench-results/runs/2026-12-02-h200-deflate-s36/call.sh
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=/tmp/dz D=/tmp/dz-data
mkdir -p $OUT/k $W
S=$OUT/summary-deflate-s36.txt
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
nproc > $OUT/k/nproc.txt
t0=$(now)
[ -f $D/.done ] || { $X --quiet generate --output $D --grid 1440x721 --storage i16 --years 1991-2020 --doys 1-366 && touch $D/.done; }
echo "generate: rc=$? $(since $t0) s, $(du -sh $D | cut -f1)" | tee -a $S
split() { # json trace
  python3 -c "
import json, collections
d = json.load(open('$1')); s = d['stage_seconds']
a = collections.defaultdict(float)
for x in json.load(open('$2'))['spans']: a[x['stage']] += x['end'] - x['start']
print('read', round(s['read'], 2), 'write', round(s['write'], 2), 'wall', round(d['wall_seconds'], 2),
      '| create-outputs', round(a['create-outputs'], 2), 'write spans', round(a['write'], 2), 'sync', round(a['sync-outputs'], 2))" 2>&1
}
one() { # form repeat flags...
  local f=$1 r=$2; shift 2; t0=$(now)
  RUST_LOG=sstclim=debug $X --quiet run --input $D --years 1991-2020 --doys 1-366 --percentile 10,90 --calendar hobday366 \
    --output $W/out-$f --overwrite --timing-json $OUT/k/$f-$r.json --trace-json $OUT/k/tr-$f-$r.json "$@" > $OUT/k/$f-$r.log 2>&1
  echo "$f $r rc=$? wall $(since $t0) s | $(split $OUT/k/$f-$r.json $OUT/k/tr-$f-$r.json) | $(du -sb $W/out-$f | cut -f1) bytes" | tee -a $S
  grep -h "compressed write" $OUT/k/$f-$r.log | sed 's/.*compressed write/  compressed write/' >> $S
  grep -h "compressed write" $OUT/k/$f-$r.log | sed -E 's/.*files, ([0-9.]+) MB -> ([0-9.]+) MB; encode\+compress ([0-9.]+) s.* call ([0-9.]+) s/\1 \2 \3 \4/' \
    | awk '{mb+=$1; z+=$2; cs+=$3; c+=$4} END{if(c>0) printf "  compressed writes: %.0f MB -> %.0f MB, compress %.2f core-s (%.0f MB/s a thread), calls %.2f s\n", mb, z, cs, mb/cs, c}' | tee -a $S
  $X bench-write-floor --like $W/out-$f --dir $W/floor --repeats 1 --json $OUT/k/floor-$f-$r.json > $OUT/k/floor-$f-$r.log 2>&1
  echo "  floor $f $r rc=$? $(tail -1 $OUT/k/floor-$f-$r.log)" | tee -a $S
  rm -rf $W/floor
}
for r in 1 2 3; do
  one f32 $r --output-type f32
  one f32z1 $r --output-type f32 --deflate 1
done
# one core's compression rate on these planes (days 1-31, so that it fits)
t0=$(now)
RUST_LOG=sstclim=debug $X --quiet run --input $D --years 1991-2020 --doys 1-31 --percentile 10,90 --calendar hobday366 \
  --output $W/out-1t --overwrite --output-type f32 --deflate 1 --write-threads 1 --segments 2 > $OUT/k/one-thread.log 2>&1
echo "one write thread, days 1-31: rc=$? $(since $t0) s" | tee -a $S
grep -h "compressed write" $OUT/k/one-thread.log | sed 's/.*compressed write/  compressed write/' | tee -a $S
rm -rf $W
cd $OUT && tar czf r-deflate-s36.tgz k && rm -rf k
