# Issue 6's GPU comparison again with this stop's kernel: ours against the source documents'
# designs on the same full-size float32 pool (scripts/bench-gpu-baselines.sh).
set -u
tar xJf .carry/bins.tar.xz -C .carry
bash scripts/bench-gpu-baselines.sh --bin .carry/sstclim --out $OUT/bl > $OUT/bl.log 2>&1
echo "rc=$?" >> $OUT/bl.log
cp .carry/call.sh $OUT/
cd $OUT && tar czf bl.tgz bl bl.log && rm -rf bl
