: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 28's floor target on the H200 after s37-h31: level-1 chunks coded about twice as fast a
# core (src/output/rle_deflate.rs: word-wise run finding, exact block size planned first, body
# written 8 bytes at a time; chunks encoded straight into shuffled planes), writeback of each
# compressed call's finished files started at once (the final fsync finds less to write), and
# publishing no longer fsyncs the files a second time. Modelled on
# ../2026-12-02-h200-deflate-s36/call.sh, same job and data path ($SCRATCH/dz-data, shared with
# the other scripts of the stop: generated only when missing, ~30 s).
# Job: `run --years 1991-2020 --doys 1-366 --percentile 10,90 --calendar hobday366`, per-doy
# outputs (1,098 files) on the node's disk, f32 and f32 `--deflate 1` alternated three times,
# each followed by the write floor of its bytes (`bench-write-floor --like`, one repeat);
# RUST_LOG=sstclim=debug keeps the compressed writer's accounting, --trace-json the split
# (create-outputs, write, sync-outputs). Then one core's coding rate: the same job on days 1-31
# with `--write-threads 1`. About 100-150 s with the data present; at most ~200 s without.
# Run (one call, carry [".carry"] holding bins.tar.xz of the merged tree's static sstclim):
#   bash bench-results/runs/2026-12-02-h200-deflate-s37/call.sh
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/dz37 D=$SCRATCH/dz-data
mkdir -p $OUT/k $W
S=$OUT/summary-deflate-s37.txt
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
nproc > $OUT/k/nproc.txt
T0=$(now)
t0=$(now)
[ -f $D/.done ] || { $X --quiet generate --output $D --grid 1440x721 --storage i16 --years 1991-2020 --doys 1-366 && touch $D/.done; }
echo "generate: rc=$? $(since $t0) s, $(du -sh $D | cut -f1)" | tee -a $S
split() { # timing json, trace json
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
  grep -h "compressed write" $OUT/k/$f-$r.log | sed -E 's/.*files, ([0-9.]+) MB -> ([0-9.]+) MB; encode\+compress ([0-9.]+) s.* call ([0-9.]+) s/\1 \2 \3 \4/' \
    | awk '{mb+=$1; z+=$2; cs+=$3; c+=$4} END{if(c>0) printf "  compressed writes: %.0f MB -> %.0f MB, compress %.2f core-s (%.0f MB/s a thread), calls %.2f s\n", mb, z, cs, mb/cs, c}' | tee -a $S
  $X bench-write-floor --like $W/out-$f --dir $W/floor --repeats 1 --json $OUT/k/floor-$f-$r.json > $OUT/k/floor-$f-$r.log 2>&1
  echo "  floor $f $r rc=$? $(tail -1 $OUT/k/floor-$f-$r.log)" | tee -a $S
  python3 -c "
import json
w = json.load(open('$OUT/k/$f-$r.json'))['stage_seconds']['write']; m = json.load(open('$OUT/k/floor-$f-$r.json'))['median_seconds']
print('  ratio $f $r: write stage %.2f s / floor %.2f s = %.2fx' % (w, m, w / m))" 2>&1 | tee -a $S
  rm -rf $W/floor
}
for r in 1 2 3; do
  one f32 $r --output-type f32
  one f32z1 $r --output-type f32 --deflate 1
done
# one core's coding rate on these planes (days 1-31, so that it fits)
t0=$(now)
RUST_LOG=sstclim=debug $X --quiet run --input $D --years 1991-2020 --doys 1-31 --percentile 10,90 --calendar hobday366 \
  --output $W/out-1t --overwrite --output-type f32 --deflate 1 --write-threads 1 --segments 2 > $OUT/k/one-thread.log 2>&1
echo "one write thread, days 1-31: rc=$? $(since $t0) s" | tee -a $S
grep -h "compressed write" $OUT/k/one-thread.log | sed 's/.*compressed write/  compressed write/' | tee -a $S
grep -h "compressed write" $OUT/k/one-thread.log | sed -E 's/.*files, ([0-9.]+) MB -> ([0-9.]+) MB; encode\+compress ([0-9.]+) s.*/\1 \3/' \
  | awk '{mb+=$1; cs+=$2} END{if(cs>0) printf "  one thread: %.0f MB in %.2f s = %.0f MB/s (s36: 200-203 MB/s)\n", mb, cs, mb/cs}' | tee -a $S
rm -rf $W
echo "script: $(since $T0) s" | tee -a $S
cd $OUT && tar czf r-deflate-s37.tgz k && rm -rf k
