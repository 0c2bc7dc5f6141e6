#!/usr/bin/env bash
# Compile-check the kernels as CUDA device code where there is no CUDA toolkit (no nvcc, no
# NVRTC): clang's CUDA front end with a small prelude standing in for what NVRTC declares
# implicitly, one -DSC_SELECT -DSC_WANT_<name> instantiation at a time, as the CUDA backend
# compiles them. Catches HIP-only constructs and selection mistakes; it is not NVRTC, so the
# real check remains a run on a CUDA machine.
#
#   scripts/cuda-syntax-check.sh [CLANG]
set -euo pipefail
cd "$(dirname "$0")/.."
clang=${1:-$(ls /usr/lib/llvm-*/bin/clang++ 2>/dev/null | sort -V | tail -1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prelude.h" <<'H'
#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
__device__ unsigned int __float_as_uint(float);
__device__ float __uint_as_float(unsigned int);
__device__ long long __double_as_longlong(double);
__device__ double __longlong_as_double(long long);
__device__ double __dadd_rn(double, double);
__device__ double __dsub_rn(double, double);
__device__ double __dmul_rn(double, double);
__device__ double __ddiv_rn(double, double);
__device__ float __ldg(const float*);
__device__ double __ldg(const double*);
__device__ int __ldg(const int*);
__device__ short __ldg(const short*);
__device__ float __ldcs(const float*);
__device__ double __ldcs(const double*);
__device__ short __ldcs(const short*);
__device__ double sqrt(double);
__device__ double floor(double);
__device__ float fminf(float, float);
__device__ float fmaxf(float, float);
__device__ void __trap();
__device__ int __all_sync(unsigned int, int);
__device__ void __stcs(unsigned int*, unsigned int);
__device__ void __stcs(unsigned long long*, unsigned long long);
__device__ __attribute__((const)) unsigned int __isGlobal(const void*);
H
status=0
# each source as it is, its headers found beside it or in kernels/ (-I kernels)
for src in kernels/climatology.hip kernels/events.hip kernels/bench/baselines.hip; do
    for name in $(grep -o 'SC_WANT_[a-z0-9_]*' "$src" | sed 's/SC_WANT_//' | sort -u); do
        if "$clang" -x cuda --cuda-gpu-arch=sm_80 --cuda-device-only -nocudainc -nocudalib -std=c++17 -O1 \
            -ffp-contract=off -Wno-pass-failed -DSC_SELECT "-DSC_WANT_$name" -include "$tmp/prelude.h" \
            -I kernels -S -o "$tmp/$name.ptx" "$src" && grep -q "\.entry $name" "$tmp/$name.ptx"; then
            echo "ok   $src: $name"
        else
            echo "FAIL $src: $name"; status=1
        fi
    done
done
# the climatology kernels as the CUDA backend compiles them for the reference job: every
# launch constant given (src/engine/gpu/spec.rs)
src=kernels/climatology.hip
for name in sstclim_clim_f32_l11 sstclim_clim_f64_l11 sstclim_clim_i16_l11 sstclim_clim_i16o_l11; do
    if "$clang" -x cuda --cuda-gpu-arch=sm_80 --cuda-device-only -nocudainc -nocudalib -std=c++17 -O1 \
        -ffp-contract=off -Wno-pass-failed -DSC_SELECT "-DSC_WANT_$name" -DSC_K_BC=64 -DSC_K_ROWS=32 \
        -DSC_K_RING=11 -DSC_K_NPCT=1 -DSC_K_RING_GLOBAL=1 -DSC_K_HINTS=1 -DSC_K_POOL_STRIDE=1038240 \
        -DSC_K_GLEN=30 -DSC_K_NL=11 -DSC_K_HOT_LO=24 -DSC_K_HOT_HI=31 -include "$tmp/prelude.h" \
        -I kernels -S -o "$tmp/$name.k.ptx" "$src" && grep -q "\.entry $name" "$tmp/$name.k.ptx"; then
        echo "ok   $src: $name with launch constants"
    else
        echo "FAIL $src: $name with launch constants"; status=1
    fi
done
exit $status
