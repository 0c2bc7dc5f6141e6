set -u
cd .carry/mb
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } > $OUT/machine.txt 2>&1
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -arch=sm_90 -o mb main.cu > $OUT/build.txt 2>&1; echo "build rc=$?" >> $OUT/summary.txt
cuobjdump -sass mb | grep -oE "(FMNMX|VIMNMX|DSETP)[A-Z0-9.]*" | sort | uniq -c >> $OUT/summary.txt
./mb >> $OUT/summary.txt 2>&1
./mb >> $OUT/summary.txt 2>&1
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
for k in k_int k_flt k_mix; do
  timeout 120 $NCU -k $k -c 1 --metrics sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fmalite.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active ./mb 2>&1 | grep -E "pipe|==PROF==|k_" | tail -8 >> $OUT/summary.txt
done
