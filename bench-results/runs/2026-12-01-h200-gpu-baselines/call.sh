# Final binary (float64 blocks back to 128): float32 and float64 kernel timings, then issue 6's
# GPU comparison with this kernel (scripts/bench-gpu-baselines.sh: ours checked against the CPU
# engine on every value, against the source documents' designs on the same pool).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
mkdir -p $OUT/k
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; pool=$2; shift 2; timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b f32 f32 --repeats 5
b f64 f64 --repeats 3
bash scripts/bench-gpu-baselines.sh --bin .carry/sstclim --out $OUT/bl > $OUT/bl.log 2>&1
echo "baselines rc=$? $(tail -6 $OUT/bl.log | grep -E 'x \(')" | tee -a $OUT/summary.txt
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k bl bl.log && rm -rf k bl
