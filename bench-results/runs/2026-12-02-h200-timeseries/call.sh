: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 27 (time-series input, fast paths) on the H200 node: the full-year reference-size job
# (1440x721, 1991-2020, days 1-366, P10 and P90) from 30 yearly deflated files against the
# same values in the 10,958 equivalent daily deflated files, warm page cache, outputs on the
# node's disk. Three datasets, all int16 packed (OSTIA-like), deflate 4 + shuffle, written by
# `sstclim generate` on the node (no Python needed):
#   daily       10,958 files sst_YYYY_DDD.nc, (time=1, lat, lon), chunks (1, 720, 1440)
#   yearly-c1   30 files sst.day.mean.YYYY.nc (NOAA PSL's layout), chunks (1, 720, 1440)
#   yearly-c30  30 files, chunks (30, 180, 360) (CMIP6/ERA5-like: a chunk holds 30 steps,
#               inflated once for all of them)
# The target (issue 27): yearly within 1.2x of daily. Two calls, as each must end in 10 min:
#   call.sh gen   generate the three datasets (if absent; the node keeps $SCRATCH while warm)
#   (SETS="daily yearly-c30" YSETS=yearly-c30 limit both parts to those sets)
#   call.sh run   each job once unmeasured (warm cache), then daily / yearly-c1 / yearly-c30
#                 alternated twice; outputs compared bitwise (daily against each yearly set)
# Expects .carry/bins.tar.xz holding the stripped static binary as sstclim (features
# netcdf-static,bench,test-hooks) built from a tree with issue 27's discovery (s35-disc) and
# readers (s35-read). Results under $OUT as one tar per part.
set -u
part=${1:-run}
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=$SCRATCH/ts
mkdir -p $OUT/j $W
S=$OUT/summary-$part.txt
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH /dev/shm; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine-$part.txt 2>&1
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
gen=(--quiet generate --grid 1440x721 --storage i16 --years 1991-2020 --doys 1-366 --deflate 4 --shuffle)
if [ $part = gen ]; then
  for set in ${SETS:-daily yearly-c1 yearly-c30}; do
    [ -f $W/$set/.done ] && continue
    case $set in
      daily) flags=(--time-dim --chunks 720x1440) ;;
      yearly-c1) flags=(--steps-per-file year --time-chunk 1 --chunks 720x1440) ;;
      yearly-c30) flags=(--steps-per-file year --time-chunk 30 --chunks 180x360) ;;
    esac
    t0=$(now); $X "${gen[@]}" "${flags[@]}" --output $W/$set && touch $W/$set/.done
    echo "generate $set: rc=$? $(since $t0) s, $(ls $W/$set | wc -l) files, $(du -sh $W/$set | cut -f1)" | tee -a $S
  done
fi
if [ $part = run ]; then
  job() { # set tag
    local set=$1 tag=$2; t0=$(now)
    $X --quiet run --input $W/$set --years 1991-2020 --doys 1-366 --percentile 10,90 --output $W/out-$set \
      --overwrite --timing-json $OUT/j/$set-$tag.json > $OUT/j/$set-$tag.log 2>&1
    local rc=$?
    echo "$set $tag rc=$rc wall $(since $t0) s | $(python3 -c "
import json; d = json.load(open('$OUT/j/$set-$tag.json')); s = d['stage_seconds']
print('read', round(s['read'], 2), 'compute', round(s['compute'], 2), 'write', round(s['write'], 2), 'wall', round(d['wall_seconds'], 2),
      'direct', d['files_direct'], 'library', d['files_library'], 'stored', d['bytes_read'], 'inflated', d['bytes_decompressed'])" 2>&1)" | tee -a $S
  }
  # (each output set is 9 GB: at most two on the disk beside the 3 datasets)
  job daily warm
  for set in ${YSETS:-yearly-c1 yearly-c30}; do
    job $set warm
    $X compare $W/out-daily $W/out-$set > $OUT/j/compare-$set.txt 2>&1
    echo "compare daily $set rc=$? $(tail -1 $OUT/j/compare-$set.txt)" | tee -a $S
    rm -rf $W/out-$set
  done
  for r in 1 2; do for set in ${SETS:-daily yearly-c1 yearly-c30}; do job $set $r; rm -rf $W/out-$set; done; done
  rm -rf $W/out-*
fi
cp .carry/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r-$part.tgz j && rm -rf j
