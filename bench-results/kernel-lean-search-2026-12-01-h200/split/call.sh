# Where the committed kernel's time goes (for the next step): the mean only (staging, no
# searches), two percentiles (twice the searches), and two launch choices not tried since the
# register-lean search: all ring rows stored without the streaming hint, blocks of 96.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/k
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; bin=$2; pool=$3; shift 3; timeout 200 $bin bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b p90 $S f32 --repeats 5
b mean-only $S f32 --repeats 5 --mean-only
b p10-p90 $S f32 --repeats 5 --percentile 10,90
b p90-p99 $S f32 --repeats 5 --percentile 90,99
SSTCLIM_CUDA_DEFINES="SC_NO_COLD_STREAM" b no-cold-stream $S f32 --repeats 5
b b96 $S f32 --repeats 5 --gpu-block 96
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
