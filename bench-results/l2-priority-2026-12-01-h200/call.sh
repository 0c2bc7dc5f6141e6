# L2 eviction priorities for the ring (measuring): hot rows stored evict-last (SC_X_HOT_LAST),
# search loads leaving priorities unchanged (SC_X_LOAD_UNCHANGED), the persisting set-aside
# (SSTCLIM_CUDA_L2_PERSIST) and an access policy window over the ring (SSTCLIM_CUDA_L2_WINDOW).
set -u
tar xJf .carry/bins.tar.xz -C .carry
. scripts/cuda-env.sh
mkdir -p $OUT/k
S=.carry/sstclim
{ date -u; uname -a; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; $S --version; } > $OUT/machine.txt 2>&1
b() { name=$1; defs=$2; envs=$3; pool=$4; shift 4; env $envs SSTCLIM_CUDA_DEFINES="$defs" RUST_LOG=info timeout 200 $S bench-kernel --backend cuda --pool $pool --probe-bytes 1GB "$@" --json $OUT/k/$name.json > $OUT/k/$name.log 2>&1; echo "$name rc=$? $(grep -E 'kernel median|differ|floor =' $OUT/k/$name.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; }
HL="SC_X_HOT_LAST=1"; LU="SC_X_LOAD_UNCHANGED=1"; PM="SSTCLIM_CUDA_L2_PERSIST=max"
b base-1 "" "X=0" f32 --repeats 5
b hl-pmax "$HL" "$PM" f32 --repeats 5
b hl-p0 "$HL" "SSTCLIM_CUDA_L2_PERSIST=0" f32 --repeats 5
b hl-lu-pmax "$HL $LU" "$PM" f32 --repeats 5
b hl-lu-pmax-lo27 "$HL $LU SC_K_HOT_LO=27" "$PM" f32 --repeats 5
b win25 "" "$PM SSTCLIM_CUDA_L2_WINDOW=0.25" f32 --repeats 5
b win50 "" "$PM SSTCLIM_CUDA_L2_WINDOW=0.5" f32 --repeats 5
b base-2 "" "X=0" f32 --repeats 5
b hl-lu-pmax-2 "$HL $LU" "$PM" f32 --repeats 5 --verify
b hl-pmax-mean "$HL" "$PM" f32 --repeats 5 --mean-only
b base-mean "" "X=0" f32 --repeats 5 --mean-only
b base-3 "" "X=0" f32 --repeats 5
cp .carry/call.sh $OUT/
cd $OUT && tar czf k.tgz k && rm -rf k
