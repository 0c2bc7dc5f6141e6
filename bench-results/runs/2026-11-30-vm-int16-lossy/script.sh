#!/usr/bin/env bash
: "${SCRATCH:?set SCRATCH to a scratch directory for the data and outputs}"
set -uo pipefail
S=target/release/sstclim
OUT=bench-results/int16-lossy-2026-11-30-vm
W=$SCRATCH/full
{ echo "date: $(date -u +%FT%TZ)"; uname -a; nproc; free -g | head -2; $S --version; } > $OUT/machine.txt
[ -f $W/data/.sstclim-dataset.json ] || $S -q generate --output $W/data --years 1991-2020 --doys 147-248 > $OUT/generate.out 2>&1
JOB="--input $W/data --years 1991-2020 --doys 152-243 --backend cpu --overwrite"
echo "$S -q run $JOB --pool f64 --output $W/f64" > $OUT/commands.txt
/usr/bin/time -f "%e s %M KB" $S -q run $JOB --pool f64 --output $W/f64 --timing-json $OUT/run-f64.json > /dev/null 2> $OUT/run-f64.time
for sc in 0.001 0.003; do
  echo "$S -q run $JOB --pack-scale $sc --pack-offset 15 --output $W/i16-$sc" >> $OUT/commands.txt
  /usr/bin/time -f "%e s %M KB" $S -q run $JOB --pack-scale $sc --pack-offset 15 --output $W/i16-$sc --timing-json $OUT/run-i16-$sc.json > /dev/null 2> $OUT/run-i16-$sc.time
  $S compare $W/f64 $W/i16-$sc --tolerance 1 --json $OUT/compare-$sc.json > $OUT/compare-$sc.out 2>&1
done
echo done > $OUT/done
