typedef unsigned int u32;
#define N 16
#define BODY(CX) \
    u32 x[N]; \
    for (int i = 0; i < N; ++i) x[i] = seed * (threadIdx.x + 1) * (i + 7); \
    for (int it = 0; it < iters; ++it) { \
        _Pragma("unroll") for (int i = 0; i < N; i += 2) CX(i, i + 1) \
        _Pragma("unroll") for (int i = 1; i + 1 < N; i += 2) CX(i, i + 1) \
        x[0] ^= it; \
    } \
    u32 s = 0; for (int i = 0; i < N; ++i) s += x[i]; \
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#define CX_MM(a, b) { u32 lo = min(x[a], x[b]), hi = max(x[a], x[b]); x[a] = lo; x[b] = hi; }
#define CX_SUM(a, b) { u32 lo = min(x[a], x[b]); u32 hi = x[a] + x[b] - lo; x[a] = lo; x[b] = hi; }
#define CX_MAD(a, b) { u32 lo = min(x[a], x[b]); u32 t, hi; \
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(t) : "r"(x[a]), "r"(one), "r"(x[b])); \
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(hi) : "r"(lo), "r"(mone), "r"(t)); x[a] = lo; x[b] = hi; }
extern "C" __global__ void c_mm(u32* out, u32 seed, int iters, u32 one, u32 mone) { BODY(CX_MM) }
extern "C" __global__ void c_sum(u32* out, u32 seed, int iters, u32 one, u32 mone) { BODY(CX_SUM) }
extern "C" __global__ void c_mad(u32* out, u32 seed, int iters, u32 one, u32 mone) { BODY(CX_MAD) }
