: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
# Issue 29's performance target on the H200 node after s36-h29 (the last segment of a smoothed
# job is a quarter of the others, so 36 days instead of 53 are made and written after the last
# compute; batches of 8 days; the memory model counts what the smoothing writer holds): the
# full-year reference-size job (1440x721 int16, 1991-2020, days 1-366, hobday366, h=5, P90,
# method 7, CUDA engine, stacked outputs) without and with --smooth 31 (target: at most 1.1x),
# as in ../2026-12-02-h200-smooth: one warm-up run, then plain / smooth31 alternated five times,
# and --smooth 31 with --segments 1 against the default segments at --tolerance 0 (bitwise).
# Ratios by the report's wall and by the last write's end (the trace), pair by pair.
#
# Prepared on the dev VM from the repository root (the lead):
#   cargo build --release --locked --features netcdf-static,bench,test-hooks && strip target/release/sstclim
#   mkdir -p .carry && cp target/release/sstclim .carry/ && tar cJf .carry/bins.tar.xz -C .carry sstclim \
#     && rm .carry/sstclim
# (optionally also a static main binary as .carry/sstclim-before in the same tar: then its
# plain / smooth31 pairs are alternated with the new binary's, for a before/after in one call)
# then one device call, outputs on the node's disk:
#   run(command="O=$SCRATCH/sm/out bash bench-results/runs/2026-12-02-h200-smooth-s36/call.sh",
#       carry=[".carry"], kind="nvidia-h200", timeout_s=600)
# Generation writes 10,958 int16 files (22 GB) to $SCRATCH/sm/data, about 20 s; the whole call
# about 3 minutes (5 with the before binary).
set -u
[ -x .carry/sstclim ] || { cd .carry && tar xJf bins.tar.xz && cd ..; }
. scripts/bench/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
G=${GRID:-1440x721} BK=${BACKEND:-cuda}  # GRID, BACKEND: only to try the script elsewhere
X=$PWD/.carry/sstclim B=$PWD/.carry/sstclim-before W=$SCRATCH/sm O=${O:-$SCRATCH/sm/out}
D=$W/data
mkdir -p $OUT/j $W $O
S=$OUT/summary.txt
{ date -u; uname -a; nproc; free -g; df -h $SCRATCH /dev/shm; nvidia-smi --query-gpu=name,driver_version --format=csv; $X --version; } > $OUT/machine.txt 2>&1
now() { date +%s.%N; }
since() { awk -v a=$1 -v b=$(now) 'BEGIN{printf "%.2f", b-a}'; }
if [ ! -f $D/.done ]; then
  t0=$(now)
  $X --quiet generate --output $D --grid $G --storage i16 --years 1991-2020 --doys 1-366 && touch $D/.done
  echo "generate i16 $G 1991-2020 days 1-366: rc=$? $(since $t0) s, $(du -sh $D | cut -f1)" | tee -a $S
fi
job=(--input $D --years 1991-2020 --doys 1-366 --calendar hobday366 --half-window 5 --percentile 90 --method 7
     --backend $BK --layout stacked --overwrite)
hob() { # binary name repeat flags...
  local x=$1 v=$2 r=$3; shift 3
  t0=$(now)
  $x --quiet run "${job[@]}" "$@" --output $O/sm-$v --timing-json $OUT/j/$v-$r.json --trace-json $OUT/j/$v-$r-trace.json > $OUT/j/$v-$r.log 2>&1
  echo "$v $r rc=$? wall $(since $t0) s | $(python3 - $OUT/j/$v-$r.json $OUT/j/$v-$r-trace.json <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1])); sp = json.load(open(sys.argv[2]))['spans']
end = lambda *st: max([s['end'] for s in sp if s['stage'] in st] or [0])
tot = lambda st: sum(s['end'] - s['start'] for s in sp if s['stage'] == st)
segs = len({s.get('batch') for s in sp if s['stage'] == 'compute'})
print(f"report {d['wall_seconds']:.2f} s, write stage {d['stage_seconds']['write']:.2f} s, reads end {end('read', 'upload'):.2f},"
      f" compute end {end('compute'):.2f}, last write end {end('write', 'smooth', 'hold'):.2f},"
      f" tail {end('write', 'smooth', 'hold') - end('compute'):.2f}, smooth {tot('smooth'):.2f} s,"
      f" write spans {tot('write'):.2f} s, {segs} segments, peak RSS {d['peak_rss_bytes'] / 1e9:.1f} GB, pin {d['pin_seconds']:.3f} s")
PY
)" | tee -a $S
}
hob $X warm 1
for r in 1 2 3 4 5; do
  hob $X plain $r
  hob $X smooth31 $r --smooth 31
  if [ -x $B ]; then
    hob $B before-plain $r
    hob $B before-smooth31 $r --smooth 31
  fi
done
hob $X smooth31-seg1 1 --smooth 31 --segments 1
$X compare $O/sm-smooth31 $O/sm-smooth31-seg1 --tolerance 0 > $OUT/j/compare-segments.txt 2>&1
echo "compare smooth31 default segments / --segments 1: rc=$? $(tail -1 $OUT/j/compare-segments.txt)" | tee -a $S
if [ -x $B ]; then
  $X compare $O/sm-smooth31 $O/sm-before-smooth31 --tolerance 0 > $OUT/j/compare-before.txt 2>&1
  echo "compare smooth31 new / before binary: rc=$? $(tail -1 $OUT/j/compare-before.txt)" | tee -a $S
fi
# the ratios, pair by pair (smooth31 r / plain r of the same binary), by the report's wall and
# by the last write's end
python3 - $OUT/j <<'PY' 2>&1 | tee -a $S
import json, os, statistics, sys
j = sys.argv[1]
def figs(v, r):
    d = json.load(open(f"{j}/{v}-{r}.json")); sp = json.load(open(f"{j}/{v}-{r}-trace.json"))['spans']
    return d['wall_seconds'], max(s['end'] for s in sp if s['stage'] in ('write', 'smooth', 'hold'))
for pre in ('', 'before-'):
    if not os.path.exists(f"{j}/{pre}plain-1.json"):
        continue
    wall, last = [], []
    for r in range(1, 6):
        (pw, pl), (sw, sl) = figs(pre + 'plain', r), figs(pre + 'smooth31', r)
        wall.append(sw / pw); last.append(sl / pl)
        print(f"{pre or 'new-'}pair {r}: report wall {sw:.2f} / {pw:.2f} = {sw / pw:.3f}x, last write end {sl:.2f} / {pl:.2f} = {sl / pl:.3f}x")
    for name, x in (('report wall', wall), ('last write end', last)):
        print(f"{pre or 'new-'}{name} ratio: median {statistics.median(x):.3f}x, range {min(x):.3f}-{max(x):.3f}x")
PY
rm -rf $O/sm-*
cp bench-results/runs/2026-12-02-h200-smooth-s36/call.sh $OUT/ 2>/dev/null
cd $OUT && tar czf r.tgz j && rm -rf j
