# Kernel with the block barrier: L1/shared carveout and register caps.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
b() { name=$1; shift; env "$@" timeout 120 $S -q bench-kernel --backend cuda --probe-bytes 1GB --repeats 3 --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/summary.txt; }
b base-1 X=1; b carve0-1 SSTCLIM_CUDA_CARVEOUT=0; b carve25-1 SSTCLIM_CUDA_CARVEOUT=25; b carve50-1 SSTCLIM_CUDA_CARVEOUT=50; b mb2-1 SSTCLIM_CUDA_MIN_BLOCKS=2; b mb2c0-1 SSTCLIM_CUDA_MIN_BLOCKS=2 SSTCLIM_CUDA_CARVEOUT=0
b base-2 X=1; b carve0-2 SSTCLIM_CUDA_CARVEOUT=0; b mb2-2 SSTCLIM_CUDA_MIN_BLOCKS=2
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
