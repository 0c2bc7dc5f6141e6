# Call 2: is L1 capacity what limits the new kernel? Shared-memory carveouts (percent of 228 KB;
# fewer blocks fit, more L1) on the full-size job; a quarter-size Nsight Compute profile.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/k
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; bin=$2; pool=$3; shift 3; timeout 200 $bin bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
for i in 1 2; do
  b new-$i $S f32 --repeats 5
  for c in 86 72 58 44 30; do SSTCLIM_CUDA_CARVEOUT=$c b carve$c-$i $S f32 --repeats 5; done
done
mkdir -p $OUT/prof
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 150 $NCU --set full -k regex:sstclim_clim -c 1 -o $OUT/prof/full $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/prof/ncu.log 2>&1; echo "ncu rc=$?" >> $OUT/summary.txt
if [ -f $OUT/prof/full.ncu-rep ]; then
  $NCU -i $OUT/prof/full.ncu-rep --page details > $OUT/prof/details.txt 2>&1
  $NCU -i $OUT/prof/full.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass.csv 2>&1
  $NCU -i $OUT/prof/full.ncu-rep --page raw --csv > $OUT/prof/raw.csv 2>&1
  gzip $OUT/prof/details.txt $OUT/prof/sass.csv $OUT/prof/raw.csv; rm -f $OUT/prof/full.ncu-rep
fi
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
