# Kernel variants behind defines: block barrier per load (SC_SYNC_TARGETS), odd-even sort (SC_SORT_OET).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
export HDF5_USE_FILE_LOCKING=FALSE
S=.carry/sstclim
mkdir -p $OUT/k $OUT/t
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; $S --version; } > $OUT/machine.txt 2>&1
for d in SC_SYNC_TARGETS SC_SORT_OET; do
  SSTCLIM_CUDA_DEFINES=$d timeout 150 .carry/libtests --test-threads 4 engine:: > $OUT/t/lib-$d.txt 2>&1
  echo "lib engine:: $d rc=$? $(grep 'test result' $OUT/t/lib-$d.txt)" | tee -a $OUT/summary.txt
done
b() { name=$1; defs=$2; shift 2; SSTCLIM_CUDA_DEFINES="$defs" timeout 90 $S -q bench-kernel --backend cuda --repeats 3 --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep 'kernel median' $OUT/k/$name.log)" | tee -a $OUT/summary.txt; }
b base-1 ""; b sync-1 SC_SYNC_TARGETS; b oet-1 SC_SORT_OET; b sync256-1 SC_SYNC_TARGETS --gpu-block 256; b sync64-1 SC_SYNC_TARGETS --gpu-block 64
b base-2 ""; b sync-2 SC_SYNC_TARGETS; b oet-2 SC_SORT_OET
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k t && rm -rf k t
