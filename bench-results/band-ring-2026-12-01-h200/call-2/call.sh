# Band ring, second version: fixed band rows GLEN-K+1..GLEN+1 (no per-row address arithmetic),
# a rebuild only where a start lies at or below the floor, where a downward walk has fewer
# stored samples than steps, or where a group's band ran out during the walk (was: whenever
# le - steps + 1 fell below the floor, i.e. every search without a hint); slots reloaded on a
# retry, one rebuild call site. K = 8..20 against the committed kernel (SC_K_BAND unset).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE
mkdir -p $OUT/k $OUT/t
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; pool=$3; shift 3; SSTCLIM_CUDA_DEFINES="$defs" timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
b base-1 "" f32 --repeats 5
b band8 "SC_K_BAND=8" f32 --repeats 5 --verify
b band12 "SC_K_BAND=12" f32 --repeats 5 --verify
b band16 "SC_K_BAND=16" f32 --repeats 5
b band20 "SC_K_BAND=20" f32 --repeats 5
SSTCLIM_CUDA_MIN_BLOCKS=2 b band12-mb2 "SC_K_BAND=12" f32 --repeats 5
b band8-mean "SC_K_BAND=8" f32 --repeats 3 --mean-only
b base-mean "" f32 --repeats 3 --mean-only
b base-2 "" f32 --repeats 5
b band12-p50 "SC_K_BAND=12" f32 --repeats 1 --percentile 50 --verify
b band12-f64 "SC_K_BAND=12" f64 --repeats 3
for k in 4 1; do
  SSTCLIM_CUDA_DEFINES="SC_K_BAND=$k" timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-engine-band$k.txt 2>&1
  echo "lib engine:: band $k rc=$? $(grep 'test result' $OUT/t/lib-engine-band$k.txt)" | tee -a $OUT/summary.txt
done
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
