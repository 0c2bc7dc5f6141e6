# Output files created by up to 4 processes (every 4th file each) instead of one: sstclim (new)
# against sstclim-old (the previous commit), alternating, end to end on generated full-size
# int16 (OSTIA-like) and float64 datasets; timelines of one new and one old int16 run.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/p
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
W=/tmp/sstclim-bench
$S -q generate --output $W/d16 --years 1991-2020 --doys 147-248 --storage i16 > $OUT/p/generate16.txt 2>&1
$S -q generate --output $W/d64 --years 1991-2020 --doys 147-248 > $OUT/p/generate64.txt 2>&1
now() { date +%s.%N; }
run() { name=$1; bin=$2; d=$3; shift 3; rm -rf $W/$name; t0=$(now); .carry/$bin run --input $W/$d --years 1991-2020 --doys 152-243 --half-window 5 "$@" --output $W/$name --backend cuda --rates none --timing-json $OUT/p/$name.json > $OUT/p/$name.log 2>&1; rc=$?; t1=$(now); echo "$name rc=$rc $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/p/e2e.txt; }
for d in d16 d64; do
  $S bench-read --input $W/$d --years 1991-2020 --doys 152-243 --repeats 1 > /dev/null
  $S bench-read --input $W/$d --years 1991-2020 --doys 152-243 --repeats 3 > $OUT/p/read-floor-$d.txt
  run warm-$d sstclim $d; rm -rf $W/warm-$d
  for i in 1 2 3 4; do
    run old-$d-$i sstclim-old $d; [ $i = 4 ] || rm -rf $W/old-$d-$i
    run new-$d-$i sstclim $d; [ $i = 4 ] || rm -rf $W/new-$d-$i
  done
  $S compare $W/new-$d-4 $W/old-$d-4 --tolerance 0 > $OUT/p/compare-$d.txt 2>&1 && echo "new-$d-4 = old-$d-4 bitwise" | tee -a $OUT/p/e2e.txt
  rm -rf $W/new-$d-4 $W/old-$d-4
done
run tl-new sstclim d16 --trace-json $OUT/p/timeline-new.json; rm -rf $W/tl-new
run tl-old sstclim-old d16 --trace-json $OUT/p/timeline-old.json; rm -rf $W/tl-old
cat $OUT/p/e2e.txt $OUT/p/read-floor-*.txt > $OUT/summary.txt
gzip $OUT/p/timeline-*.json
cp .carry/call.sh $OUT/
cd $OUT && tar czf p.tgz p && rm -rf p
