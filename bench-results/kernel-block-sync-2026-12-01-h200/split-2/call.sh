# Kernel with the block barrier: register cap x carveout; float64 and int16 pools.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
b() { name=$1; shift; pool=$1; shift; env "$@" timeout 120 $S -q bench-kernel --backend cuda --pool $pool --probe-bytes 1GB --repeats 3 --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/summary.txt; }
b base-1 f32 X=1; b mb2-1 f32 SSTCLIM_CUDA_MIN_BLOCKS=2; b mb2c25-1 f32 SSTCLIM_CUDA_MIN_BLOCKS=2 SSTCLIM_CUDA_CARVEOUT=25; b mb2c15-1 f32 SSTCLIM_CUDA_MIN_BLOCKS=2 SSTCLIM_CUDA_CARVEOUT=15
b mb2c35-1 f32 SSTCLIM_CUDA_MIN_BLOCKS=2 SSTCLIM_CUDA_CARVEOUT=35; b c15-1 f32 SSTCLIM_CUDA_CARVEOUT=15; b c35-1 f32 SSTCLIM_CUDA_CARVEOUT=35
b mb2c25-2 f32 SSTCLIM_CUDA_MIN_BLOCKS=2 SSTCLIM_CUDA_CARVEOUT=25; b base-2 f32 X=1
b f64-base f64 X=1; b f64-mb2 f64 SSTCLIM_CUDA_MIN_BLOCKS=2; b f64-c25 f64 SSTCLIM_CUDA_CARVEOUT=25; b f64-mb2c25 f64 SSTCLIM_CUDA_MIN_BLOCKS=2 SSTCLIM_CUDA_CARVEOUT=25
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
