// host_cuda_shims.h: the CUDA built-ins the kernels in kernels/ use, as host C++, so that the
// host checks (tests/kernels/*_host_check.cpp) can compile a kernel source as plain C++ and run each
// (block, thread) in turn. Included before the kernel source, in place of a CUDA compiler.
#pragma once
#define SC_HOST_CHECK 1  // kernels/sstclim_port.h: no device inline assembly
#include <cstdlib>
#include <cstring>

struct sc_dim3 {
    unsigned x = 0, y = 0, z = 0;
};
static sc_dim3 threadIdx, blockIdx, blockDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __launch_bounds__(...)
static unsigned __float_as_uint(float v) { unsigned u; std::memcpy(&u, &v, 4); return u; }
static float __uint_as_float(unsigned u) { float v; std::memcpy(&v, &u, 4); return v; }
static long long __double_as_longlong(double v) { long long u; std::memcpy(&u, &v, 8); return u; }
static double __longlong_as_double(long long u) { double v; std::memcpy(&v, &u, 8); return v; }
static double __dadd_rn(double a, double b) { return a + b; }
static double __dsub_rn(double a, double b) { return a - b; }
static double __dmul_rn(double a, double b) { return a * b; }
static double __ddiv_rn(double a, double b) { return a / b; }
static void __trap() { std::abort(); }
static void __syncthreads() {}
// one thread at a time: a wave of one lane
static int __all_sync(unsigned, int pred) { return pred; }
template <typename T>
static T __ldg(const T* p) { return *p; }
template <typename T>
static T __ldcs(const T* p) { return *p; }
template <typename T>
static void __stcs(T* p, T v) { *p = v; }
static unsigned __isGlobal(const void*) { return 1; }
#ifndef __clang__
#define __builtin_assume(cond) ((void)0)
#endif
