# Issue 26 on the 2-core dev VM: the read stage (--segments 1) of a job on a 360x181, 10-year x
# 102-day int16 dataset stored deflated (deflate 4 + shuffle, chunks 91x180: 4 chunks a file)
# against the same dataset stored contiguous, alternating, 5 repeats each; then the deflated
# dataset through the reader processes (--read-path forked, the path such files took before),
# and bench-read's inflate floor. Outputs of the deflated and contiguous jobs compared bitwise.
# Usage: bash run.sh SSTCLIM_BINARY WORKDIR  (writes results.txt and *.json beside itself)
set -u
X=$1 W=$2 H=$(cd "$(dirname "$0")" && pwd)
G=(--grid 360x181 --years 2001-2010 --doys 147-248 --storage i16)
$X --quiet generate --output $W/c "${G[@]}"
$X --quiet generate --output $W/z "${G[@]}" --deflate 4 --shuffle --chunks 91x180
echo "contiguous $(du -sh $W/c | cut -f1), deflated $(du -sh $W/z | cut -f1)" > $H/results.txt
J=(--years 2001-2010 --doys 152-243 --half-window 5 --percentile 90 --segments 1 --backend cpu)
read_s() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['stage_seconds']['read'], r['wall_seconds'], r.get('bytes_read'), r.get('bytes_decompressed'), r['files_direct'], r['files_library'])" $1; }
for r in 1 2 3 4 5; do
  for d in z c; do
    $X --quiet run --input $W/$d --output $W/o-$d-$r "${J[@]}" --timing-json $H/$d-$r.json
    echo "$d $r read/wall/stored/decompressed/direct/library: $(read_s $H/$d-$r.json)" >> $H/results.txt
  done
done
$X compare $W/o-z-1 $W/o-c-1 --tolerance 0 > $H/compare.txt 2>&1; echo "compare z/c rc=$? $(tail -1 $H/compare.txt)" >> $H/results.txt
for r in 1 2 3; do
  $X --quiet run --input $W/z --output $W/o-f-$r "${J[@]}" --read-path forked --timing-json $H/forked-$r.json
  echo "forked $r read/wall/...: $(read_s $H/forked-$r.json)" >> $H/results.txt
done
$X bench-read --input $W/z --years 2001-2010 --doys 152-243 --half-window 5 --inflate --repeats 5 >> $H/results.txt
$X bench-read --input $W/c --years 2001-2010 --doys 152-243 --half-window 5 --repeats 5 >> $H/results.txt
rm -rf $W/o-*
