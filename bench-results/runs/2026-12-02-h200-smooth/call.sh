# Issue 29's performance target on the H200 node after the smoothing writer's rework (branch
# s35-smooth): the full-year reference-size job (1440x721, 1991-2020, days 1-366, hobday366,
# h=5, P90, method 7, CUDA engine, stacked outputs) without and with --smooth 31 (target: at
# most 1.1x), as in ../2026-12-02-h200-hobday and ../2026-12-02-h200-merged: one warm-up run,
# then plain / smooth31 alternated three times, marineHeatWaves' whole climatology once, and
# --smooth 31 with --segments 1 against the default segments at --tolerance 0 (bitwise).
#
# Prepared on the dev VM from the repository root (the lead):
#   cargo build --release --locked --features netcdf-static,bench,test-hooks && strip target/release/sstclim
#   mkdir -p .carry && cp target/release/sstclim .carry/ && tar cJf .carry/bins.tar.xz -C .carry sstclim \
#     && rm .carry/sstclim
# then one device call: `bash bench-results/runs/2026-12-02-h200-smooth/call.sh` with carry
# [".carry"] (or `... call.sh gen` then `... call.sh runs` if one call is too long: generation
# writes 11,688 int16 files, 24 GB, to /tmp/sm on the node's disk, about 20 s; 1990 and 2021 for
# the extended windows of the mhw run).
# Outputs go to $O (default /dev/shm, as the earlier measurements; O=/tmp/sm/out for the disk).
set -u
part=${1:-all}
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
X=$PWD/.carry/sstclim W=/tmp/sm O=${O:-/dev/shm}
D=$W/data
mkdir -p $OUT/j $W
S=$OUT/summary-$part.txt
{ date -u; uname -a; nproc; free -g; df -h /tmp /dev/shm; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine-$part.txt 2>&1
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
if [ $part != runs ] && [ ! -f $D/.done ]; then
  t0=$(now)
  $X --quiet generate --output $D --grid 1440x721 --storage i16 --years 1990-2021 --doys 1-366 && touch $D/.done
  echo "generate i16 1440x721 1990-2021 days 1-366: rc=$? $(since $t0) s, $(du -sh $D | cut -f1)" | tee -a $S
fi
if [ $part != gen ]; then
  job=(--input $D --years 1991-2020 --doys 1-366 --calendar hobday366 --half-window 5 --percentile 90 --method 7
       --backend cuda --layout stacked --overwrite)
  hob() { # name repeat flags...
    local v=$1 r=$2; shift 2
    t0=$(now)
    $X --quiet run "${job[@]}" "$@" --output $O/sm-$v --timing-json $OUT/j/$v-$r.json --trace-json $OUT/j/$v-$r-trace.json > $OUT/j/$v-$r.log 2>&1
    echo "$v $r rc=$? wall $(since $t0) s | $(python3 - $OUT/j/$v-$r.json $OUT/j/$v-$r-trace.json <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1])); sp = json.load(open(sys.argv[2]))['spans']
end = lambda *st: max([s['end'] for s in sp if s['stage'] in st] or [0])
tot = lambda st: sum(s['end'] - s['start'] for s in sp if s['stage'] == st)
print(f"report {d['wall_seconds']:.2f} s, write stage {d['stage_seconds']['write']:.2f} s, reads end {end('read', 'upload'):.2f},"
      f" compute end {end('compute'):.2f}, last write end {end('write', 'smooth', 'hold'):.2f}, smooth {tot('smooth'):.2f} s,"
      f" write spans {tot('write'):.2f} s, peak RSS {d['peak_rss_bytes'] / 1e9:.1f} GB, pin {d['pin_seconds']:.3f} s")
PY
)" | tee -a $S
  }
  hob warm 1
  for r in 1 2 3; do hob plain $r; hob smooth31 $r --smooth 31; done
  hob mhw 1 --window-edges extend --feb29 interpolate --smooth 31
  hob smooth31-seg1 1 --smooth 31 --segments 1
  $X compare $O/sm-smooth31 $O/sm-smooth31-seg1 --tolerance 0 > $OUT/j/compare-segments.txt 2>&1
  echo "compare smooth31 default segments / --segments 1: rc=$? $(tail -1 $OUT/j/compare-segments.txt)" | tee -a $S
  rm -rf $O/sm-*
fi
cp bench-results/runs/2026-12-02-h200-smooth/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r-$part.tgz j && rm -rf j
