# The walk that loads the taken group's next key before the tournament of the other heads,
# against the classic walk (SC_WALK_CLASSIC), with and without the 85-register cap, blocks of 64
# and 128, on the full-size float32 job (kernels compiled for their launch constants).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
C="SC_WALK_CLASSIC"
for i in 1 2; do
  SSTCLIM_CUDA_MIN_BLOCKS=3 b new-minb3-b128-$i f32 --repeats 5
  SSTCLIM_CUDA_MIN_BLOCKS=3 SSTCLIM_CUDA_DEFINES=$C b classic-minb3-b128-$i f32 --repeats 5
  SSTCLIM_CUDA_MIN_BLOCKS=3 b new-minb3-b64-$i f32 --repeats 5 --gpu-block 64
  SSTCLIM_CUDA_MIN_BLOCKS=3 SSTCLIM_CUDA_DEFINES=$C b classic-minb3-b64-$i f32 --repeats 5 --gpu-block 64
  b new-b128-$i f32 --repeats 5
  SSTCLIM_CUDA_DEFINES=$C b classic-b128-$i f32 --repeats 5
done
b new-b64 f32 --repeats 5 --gpu-block 64
b f64-new f64 --repeats 3
SSTCLIM_CUDA_DEFINES=$C b f64-classic f64 --repeats 3
SSTCLIM_CUDA_MIN_BLOCKS=3 b verify-new-minb3-b64 f32 --repeats 1 --verify --gpu-block 64
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
