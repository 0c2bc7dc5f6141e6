set -x
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE
S=.carry/sstclim
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/smi.txt 2>&1
$S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --json $OUT/base.json > $OUT/base.log 2>&1
$S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB --mean-only --json $OUT/meanonly.json > $OUT/meanonly.log 2>&1
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
SSTCLIM_CUDA_LINEINFO=1 timeout 240 $NCU --set full --import-source yes -k regex:sstclim_clim -c 1 -o $OUT/full $S -q bench-kernel --backend cuda --grid 720x361 --repeats 1 --probe-bytes 256MB > $OUT/ncu.log 2>&1
$NCU -i $OUT/full.ncu-rep --page details --print-details all > $OUT/details.txt 2>&1
$NCU -i $OUT/full.ncu-rep --page source --csv --print-source sass > $OUT/sass.csv 2>&1
$NCU -i $OUT/full.ncu-rep --page source --csv --print-source cuda > $OUT/cuda.csv 2>&1
ls -la $OUT; tail -5 $OUT/base.log $OUT/meanonly.log
