# Where staging's time goes (for the next step): Nsight Compute profiles of the committed kernel
# at quarter size (720x361), the mean alone (staging, no searches) and the reference job.
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
mkdir -p $OUT/prof
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
for v in mean full; do
  extra=""; [ $v = mean ] && extra="--mean-only"
  SSTCLIM_CUDA_LINEINFO=1 timeout 200 $NCU --set full -k regex:sstclim_clim -c 1 -o $OUT/prof/$v $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB $extra > $OUT/prof/ncu-$v.log 2>&1; echo "ncu $v rc=$?" >> $OUT/summary.txt
  if [ -f $OUT/prof/$v.ncu-rep ]; then
    $NCU -i $OUT/prof/$v.ncu-rep --page details > $OUT/prof/details-$v.txt 2>&1
    $NCU -i $OUT/prof/$v.ncu-rep --page source --csv --print-source sass > $OUT/prof/sass-$v.csv 2>&1
    $NCU -i $OUT/prof/$v.ncu-rep --page raw --csv > $OUT/prof/raw-$v.csv 2>&1
    gzip $OUT/prof/details-$v.txt $OUT/prof/sass-$v.csv $OUT/prof/raw-$v.csv; rm -f $OUT/prof/$v.ncu-rep
  fi
done
cp .carry/call.sh $OUT/
