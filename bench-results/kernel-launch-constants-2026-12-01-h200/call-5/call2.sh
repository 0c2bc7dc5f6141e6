# float64: blocks of 64 (default of the final binary) against 128, alternating.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do b f64-b64-$i f64 --repeats 3; b f64-b128-$i f64 --repeats 3 --gpu-block 128; done
cp .carry/call2.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
