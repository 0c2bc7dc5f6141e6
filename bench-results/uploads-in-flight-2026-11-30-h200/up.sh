set -u
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_TEST_BIN=$PWD/.carry/sstclim
mkdir -p $OUT/t
for t in libtests pipeline-tests; do timeout 200 .carry/$t --test-threads 4 > $OUT/t/$t.txt 2>&1; echo "$t rc=$?"; grep -E "test result" $OUT/t/$t.txt; done
S=.carry/sstclim; W=/tmp/sstclim-bench; D=$W/data
[ -f $D/.sstclim-dataset.json ] || $S -q generate --output $D --years 1991-2020 --doys 147-248 > /dev/null 2>&1
JOB=(--input $D --years 1991-2020 --doys 152-243 --half-window 5)
$S bench-read "${JOB[@]}" --repeats 1 > /dev/null
$S bench-read "${JOB[@]}" --repeats 5 --json $OUT/floor.json | tee $OUT/floor.txt
now() { date +%s.%N; }
run() { name=$1; shift; t0=$(now); env "$@" $S -q run "${JOB[@]}" --output $W/$name --backend cuda --timing-json $OUT/$name.json --trace-json $OUT/trace-$name.json > /dev/null 2>&1; t1=$(now); echo "$name $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}')" | tee -a $OUT/e2e.txt; }
run warm X=1
for i in 1 2 3; do for r in 1 2 3; do run rows$r-$i SSTCLIM_STAGING_ROWS=$r; done; done
$S -q run "${JOB[@]}" --output $W/seqlib --backend cuda --read-path library --segments 1 --gpu-pool host --write-path library > /dev/null 2>&1
$S compare $W/rows3-3 $W/seqlib --tolerance 0 > $OUT/compare.txt 2>&1 && echo "EQUAL rows3-3 vs sequential library" | tee -a $OUT/e2e.txt
for f in $OUT/trace-rows*.json; do python3 - $f <<'PY'
import json,sys
t=json.load(open(sys.argv[1]))['spans']
r=[e for e in t if e['stage']=='read']; w=[e for e in t if e['stage']=='wait-row']; u=[e for e in t if e['stage']=='upload']
print(sys.argv[1].split('/')[-1], 'read span %.3f'%(max(e['end'] for e in r)-min(e['start'] for e in r)), 'thread %.2f'%sum(e['end']-e['start'] for e in r), 'waits', len(w), '%.2f'%sum(e['end']-e['start'] for e in w), 'upload busy %.2f'%sum(e['end']-e['start'] for e in u), 'end %.3f'%max(e['end'] for e in t))
PY
done | tee $OUT/spans.txt
cd $OUT && tar czf all.tgz t *.json *.txt && rm -rf t *.json
