// sstclim_port.h: everything that differs between HIP (AMD, hipcc) and CUDA (NVIDIA, NVRTC or
// nvcc) for the kernels in this folder. Nothing else in kernels/ names a vendor.
//
// Each thread of the climatology kernel owns one cell; its one cross-lane operation is a vote
// (`sc_all`, over whole waves: blocks are whole waves). The other differences are the wave
// width used to size blocks, integer types (NVRTC has no <stdint.h>), bit casts and correctly
// rounded double arithmetic that the compiler may not contract into fused multiply-adds
// (results must equal the CPU engine bit for bit).
#pragma once

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
#include <hip/hip_runtime.h>
#define SC_VENDOR_HIP 1
// gfx906/gfx90a (GCN/CDNA) run 64-lane wavefronts.
#define SC_WAVE_SIZE 64
typedef unsigned long long sc_lane_mask;
#else
#define SC_VENDOR_CUDA 1
#define SC_WAVE_SIZE 32
typedef unsigned int sc_lane_mask;
#endif

typedef unsigned int sc_u32;
typedef unsigned long long sc_u64;
typedef long long sc_i64;

#define SC_DEVICE __device__ __forceinline__

SC_DEVICE sc_u32 sc_float_bits(float v) { return __float_as_uint(v); }
SC_DEVICE float sc_bits_float(sc_u32 b) { return __uint_as_float(b); }
SC_DEVICE sc_u64 sc_double_bits(double v) { return (sc_u64)__double_as_longlong(v); }
SC_DEVICE double sc_bits_double(sc_u64 b) { return __longlong_as_double((long long)b); }

// Launch bounds' second argument for kernels capped at 128 registers a thread: CUDA reads it as
// blocks of 256 threads a multiprocessor must hold (65536 / (256 x 2) = 128 registers); HIP as
// waves per execution unit, where 2 would cap gfx906 at 128 VGPRs and spill the float64 kernel
// to scratch. The cap was measured on NVIDIA only, so HIP leaves the kernels uncapped.
#ifdef SC_VENDOR_HIP
#define SC_CAPPED_MIN_BLOCKS 1
#else
#define SC_CAPPED_MIN_BLOCKS 2
#endif

// The same for float32 kernels compiled for their launch constants (SC_K_...): on CUDA at least
// 3 blocks of 256 threads (85 registers a thread; measured, see climatology.hip); HIP compiles
// every kernel ahead of time without them, and leaves them uncapped if it ever gets them.
#ifdef SC_VENDOR_HIP
#define SC_SPECIALIZED_F32_MIN_BLOCKS 1
#else
#define SC_SPECIALIZED_F32_MIN_BLOCKS 3
#endif

// Whether float32 kernels keep the barrier that makes a block's warps meet after every load
// (climatology.hip, where the measurements are): CUDA's run faster without it since the
// register-lean search; HIP's keep it, as every other kernel does (not measured on AMD).
#ifdef SC_VENDOR_HIP
#define SC_F32_LOAD_BARRIER 1
#else
#define SC_F32_LOAD_BARRIER 0
#endif

// A load of data read once: ask the caches to evict it first.
#ifdef SC_VENDOR_HIP
template <typename T>
SC_DEVICE T sc_load_stream(const T* p) { return __builtin_nontemporal_load(p); }
#else
template <typename T>
SC_DEVICE T sc_load_stream(const T* p) { return __ldcs(p); }
#endif

// Stop the kernel: the launch fails with an error the backend reports.
#ifdef SC_VENDOR_HIP
SC_DEVICE void sc_trap() { __builtin_trap(); }
#else
SC_DEVICE void sc_trap() { __trap(); }
#endif

// A store of data unlikely to be read again soon: ask the caches to evict it first.
#ifdef SC_VENDOR_HIP
template <typename T>
SC_DEVICE void sc_store_stream(T* p, T v) { __builtin_nontemporal_store(v, p); }
#else
template <typename T>
SC_DEVICE void sc_store_stream(T* p, T v) { __stcs(p, v); }
#endif

// True for every lane of the wave when `pred` holds on every lane (called by whole waves).
#ifdef SC_VENDOR_HIP
SC_DEVICE bool sc_all(bool pred) { return __all(pred) != 0; }
#else
SC_DEVICE bool sc_all(bool pred) { return __all_sync(0xffffffffu, pred) != 0; }
#endif

// A thread's pointer into device memory, with its origin hidden from the optimizer: NVVM would
// otherwise fold the block's base into every address computed from it (five instructions an
// address instead of one wide multiply-add), and a search's loads are mostly address arithmetic.
// The assumption keeps them global loads. HIP's compiler does not fold so; the pointer stays.
#if defined(SC_VENDOR_HIP) || defined(SC_HOST_CHECK)
template <typename T>
SC_DEVICE T* sc_global_column(T* p) { return p; }
#else
template <typename T>
SC_DEVICE T* sc_global_column(T* p) {
    asm volatile("" : "+l"(p));
    __builtin_assume(__isGlobal(p));
    return p;
}
#endif

// IEEE round-to-nearest operations that are never fused (both vendors provide these).
SC_DEVICE double sc_add(double a, double b) { return __dadd_rn(a, b); }
SC_DEVICE double sc_sub(double a, double b) { return __dsub_rn(a, b); }
SC_DEVICE double sc_mul(double a, double b) { return __dmul_rn(a, b); }
SC_DEVICE double sc_div(double a, double b) { return __ddiv_rn(a, b); }
