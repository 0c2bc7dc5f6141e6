# Issue 28's write targets on the H200 node after compressed chunks are deflated on every core
# (9f44fa3; before: at most 8 threads, the direct-write threads' count). Run after
# ../2026-12-02-h200-smooth/call.sh in the same call (reuses its data, /tmp/sm/data: 1440x721
# int16, 1990-2021, days 1-366). Job: `run --years 1991-2020 --doys 1-366 --percentile 10,90
# --calendar hobday366`, per-doy outputs (1,098 files) on the node's disk, f32 and f32
# `--deflate 1` alternated twice, each followed by the write floor of its bytes
# (`bench-write-floor --like`). RUST_LOG=sstclim=debug keeps the compressed writer's own
# accounting (compress time summed over threads, HDF5 time on the writer thread).
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=/tmp/dt D=/tmp/sm/data
mkdir -p $OUT/k $W
S=$OUT/summary-deflate.txt
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
one() { # form repeat flags...
  local f=$1 r=$2; shift 2; t0=$(now)
  RUST_LOG=sstclim=debug $X --quiet run --input $D --years 1991-2020 --doys 1-366 --percentile 10,90 --calendar hobday366 \
    --output $W/out-$f --overwrite --timing-json $OUT/k/$f-$r.json "$@" > $OUT/k/$f-$r.log 2>&1
  echo "$f $r rc=$? wall $(since $t0) s | $(python3 -c "
import json; d = json.load(open('$OUT/k/$f-$r.json')); s = d['stage_seconds']
print('read', round(s['read'], 2), 'compute', round(s['compute'], 2), 'write', round(s['write'], 2), 'wall', round(d['wall_seconds'], 2))" 2>&1) | $(du -sb $W/out-$f | cut -f1) bytes" | tee -a $S
  grep -h "compressed write" $OUT/k/$f-$r.log | sed 's/.*compressed write/  compressed write/' | tee -a $S
  $X bench-write-floor --like $W/out-$f --dir $W/floor --repeats 1 --json $OUT/k/floor-$f-$r.json > $OUT/k/floor-$f-$r.log 2>&1
  echo "  floor $f $r rc=$? $(tail -1 $OUT/k/floor-$f-$r.log)" | tee -a $S
  rm -rf $W/floor
}
for r in 1 2; do
  one f32 $r --output-type f32
  one f32z1 $r --output-type f32 --deflate 1
done
rm -rf $W
cd $OUT && tar czf r-deflate.tgz k && rm -rf k
