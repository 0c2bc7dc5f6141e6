set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
timeout 200 .carry/pipeline-tests --test-threads 4 > $OUT/pipeline-tests.txt 2>&1; echo "pipeline-tests rc=$?"; grep "test result" $OUT/pipeline-tests.txt
S=.carry/sstclim; W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null 2>&1
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/floor.json | tee $OUT/floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; t0=$(now); $S -q run "${JOB[@]}" --output $W/$name --backend cuda --timing-json $OUT/$name.json --trace-json $OUT/trace-$name.json "$@" > /dev/null 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/e2e.txt; }
run warm
for i in 1 2 3; do run wt8-$i; run wt2-$i --write-threads 2; run wt4-$i --write-threads 4; done
$S compare $W/wt8-3 $W/wt2-3 --tolerance 0 > $OUT/compare.txt 2>&1 && echo "EQUAL wt8 vs wt2" | tee -a $OUT/e2e.txt
for f in $OUT/trace-wt*.json; do python3 - $f <<'PY'
import json,sys
t=json.load(open(sys.argv[1]))['spans']
g=lambda s:[e for e in t if e['stage']==s]
r=g('read'); w=g('write')
print(sys.argv[1].split('/')[-1], 'read %.3f-%.3f'%(min(e['start'] for e in r),max(e['end'] for e in r)), 'write %.3f-%.3f'%(min(e['start'] for e in w),max(e['end'] for e in w)), 'end %.3f'%max(e['end'] for e in t))
PY
done | tee $OUT/spans.txt
cd $OUT && tar czf all.tgz *.json *.txt && rm -f *.json
