# Issue 29 on the H200: the full-year reference-size job (1440x721, 1991-2020, days 1-366,
# hobday366, h=5, P90, method 7, CUDA engine) without and with --smooth 31 (target: at most
# 1.1x), and marineHeatWaves' whole climatology (--window-edges extend --feb29 interpolate
# --smooth 31), alternated plain/smooth31/mhw three times in one call; then --smooth 31 with
# --segments 1 against the default segments, compared with --tolerance 0 (the sums' order is
# fixed: bitwise the same).
#
# Prepared on the dev VM from the repository root (the lead):
#   cargo build --release --locked --features netcdf-static && strip target/release/sstclim
#   mkdir -p .carry/hobday && cp target/release/sstclim .carry/hobday/ \
#     && tar cJf .carry/bins.tar.xz -C .carry hobday && cp bench-results/runs/2026-12-02-h200-hobday/call.sh .carry/
# then one device call: `bash .carry/call.sh` (or `gen` then `runs` in two calls if one is too
# long: generation writes 11,688 int16 files, 24 GB, to /tmp/hob on the node's disk).
set -u
part=${1:-all}
[ -x .carry/hobday/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/hobday/sstclim W=/tmp/hob
mkdir -p $OUT/j $W
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h /tmp /dev/shm; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine.txt 2>&1
secs() { awk -v a=$1 -v b=$(date +%s.%N) 'BEGIN{printf "%.2f", b-a}'; }
if [ $part != runs ] && [ ! -f $W/data/.done ]; then
  t0=$(date +%s.%N)
  $X --quiet generate --output $W/data --grid 1440x721 --storage i16 --years 1990-2021 --doys 1-366 && touch $W/data/.done
  echo "generate i16 1440x721 1990-2021 days 1-366: rc=$? $(secs $t0) s, $(du -sh $W/data | cut -f1)" | tee -a $S
fi
if [ $part != gen ]; then
  job=(--input $W/data --years 1991-2020 --doys 1-366 --calendar hobday366 --half-window 5 --percentile 90 --method 7
       --backend cuda --layout stacked --overwrite)
  run() { # name repeat flags...
    local v=$1 r=$2; shift 2
    t0=$(date +%s.%N)
    $X --quiet run "${job[@]}" "$@" --output /dev/shm/hob-$v --timing-json $OUT/j/$v-$r.json > $OUT/j/$v-$r.log 2>&1
    echo "$v $r rc=$? wall $(secs $t0) s (report $(grep -o '"wall_seconds": *[0-9.]*' $OUT/j/$v-$r.json | grep -o '[0-9.]*$') s)" | tee -a $S
  }
  for r in 1 2 3; do
    run plain $r
    run smooth31 $r --smooth 31
    run mhw $r --window-edges extend --feb29 interpolate --smooth 31
  done
  run smooth31-seg1 1 --smooth 31 --segments 1
  $X compare /dev/shm/hob-smooth31 /dev/shm/hob-smooth31-seg1 --tolerance 0 > $OUT/j/compare-segments.txt 2>&1
  echo "compare smooth31 default segments / --segments 1: rc=$? $(tail -2 $OUT/j/compare-segments.txt | tr '\n' ' ')" | tee -a $S
  rm -rf /dev/shm/hob-*
fi
cp .carry/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r-$part.tgz j && rm -rf j
