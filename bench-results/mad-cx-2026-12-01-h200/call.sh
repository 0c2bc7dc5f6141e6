# Compare-exchanges whose larger key is computed as a + b - smaller with two integer
# multiply-adds by an opaque one (FMA pipe) instead of a max (ALU pipe, the busiest):
# SC_X_MAD_CX (the staging sort: 1 all, 2 every other), SC_X_MAD_HX (the heads' sort before a
# walk). Pipe microbenchmark first, then the variants interleaved with the committed kernel.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/k $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
(cd .carry/mb && nvcc -O3 -arch=sm_90 -o mb2 main2.cu && ./mb2) > $OUT/micro.txt 2>&1; cat $OUT/micro.txt >> $OUT/summary.txt
b() { name=$1; defs=$2; pool=$3; shift 3; SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" f32 --repeats 5
b cx1-1 "SC_X_MAD_CX=1" f32 --repeats 5 --verify
b cx2-1 "SC_X_MAD_CX=2" f32 --repeats 5
b hx-1 "SC_X_MAD_HX=1" f32 --repeats 5
b both-1 "SC_X_MAD_CX=1 SC_X_MAD_HX=1" f32 --repeats 5 --verify
b base-2 "" f32 --repeats 5
b cx1-2 "SC_X_MAD_CX=1" f32 --repeats 5
b cx2-2 "SC_X_MAD_CX=2" f32 --repeats 5
b hx-2 "SC_X_MAD_HX=1" f32 --repeats 5
b both-2 "SC_X_MAD_CX=1 SC_X_MAD_HX=1" f32 --repeats 5
b base-mean "" f32 --repeats 5 --mean-only
b cx1-mean "SC_X_MAD_CX=1" f32 --repeats 5 --mean-only
SSTCLIM_CUDA_DEFINES="SC_X_MAD_CX=1 SC_X_MAD_HX=1" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-both.txt 2>&1
echo "lib engine:: both rc=$? $(grep 'test result' $OUT/t/lib-engine-both.txt)" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
