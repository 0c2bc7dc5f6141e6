# Band ring (SC_K_BAND=K, off by default): timings for K = 12..24 against the committed kernel,
# full-size --verify (P90; P50 where most searches need rebuilds), the mean alone, float64,
# GPU engine tests with bands of 4 and 1 rows (rebuilds everywhere).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE
mkdir -p $OUT/k $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; pool=$3; shift 3; SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" f32 --repeats 5
b band20-1 "SC_K_BAND=20" f32 --repeats 5 --verify
b band16 "SC_K_BAND=16" f32 --repeats 5
b band24 "SC_K_BAND=24" f32 --repeats 5
b band12 "SC_K_BAND=12" f32 --repeats 5
b base-2 "" f32 --repeats 5
b band20-2 "SC_K_BAND=20" f32 --repeats 5
b base-mean "" f32 --repeats 3 --mean-only
b band20-mean "SC_K_BAND=20" f32 --repeats 3 --mean-only
b band20-p50 "SC_K_BAND=20" f32 --repeats 1 --percentile 50 --verify
b base-f64 "" f64 --repeats 3
b band20-f64 "SC_K_BAND=20" f64 --repeats 3 --verify
for k in 4 1; do
  SSTCLIM_CUDA_DEFINES="SC_K_BAND=$k" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-band$k.txt 2>&1
  echo "lib engine:: band $k rc=$? $(grep 'test result' $OUT/t/lib-engine-band$k.txt)" | tee -a $OUT/summary.txt
done
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
