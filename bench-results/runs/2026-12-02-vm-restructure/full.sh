#!/usr/bin/env bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
: "${WORK:?set WORK to the directory holding the checkouts and binaries}"
# Issue 25 on the 2-core dev VM: the reference job at full size (1440x721 float64, 1991-2020,
# days 152-243, h=5, P90, CPU engine) with the binary from before the restructure (57fc859)
# and after it, outputs compared with --tolerance 0.
set -u
A=$WORK/.carry/after/sstclim B=$WORK/.carry/before/sstclim W=$WORK/reffull O=$SCRATCH/vmrun
export SSTCLIM_RATES=none HDF5_USE_FILE_LOCKING=FALSE
{ date -u; uname -a; nproc; free -g | head -2; } > $O/machine-full.txt
[ -f $W/data/.complete ] || { $B --quiet generate --output $W/data && touch $W/data/.complete; }
job=(--input $W/data --years 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --backend cpu)
for w in before after; do
  D=$B; [ $w = after ] && D=$A
  t0=$(date +%s.%N); $D --quiet run "${job[@]}" --output $W/$w --timing-json $O/full-$w.json > $O/full-$w.log 2>&1
  echo "$w rc=$? wall $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{print b-a}') s" | tee -a $O/full-summary.txt
done
$A compare $W/before $W/after --tolerance 0 > $O/full-compare.txt 2>&1; echo "compare rc=$?" | tee -a $O/full-summary.txt
