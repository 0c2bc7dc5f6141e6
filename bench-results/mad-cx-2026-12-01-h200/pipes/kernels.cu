// pipe microbenchmark: chains of min/max compare-exchanges on different types
typedef unsigned int u32;
#define N 16
extern "C" __global__ void k_int(u32* out, u32 seed, int iters) {
    u32 x[N];
    for (int i = 0; i < N; ++i) x[i] = seed * (threadIdx.x + 1) * (i + 7);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < N; i += 2) { u32 a = min(x[i], x[i+1]), b = max(x[i], x[i+1]); x[i] = a; x[i+1] = b ^ it; }
#pragma unroll
        for (int i = 1; i + 1 < N; i += 2) { u32 a = min(x[i], x[i+1]), b = max(x[i], x[i+1]); x[i] = a; x[i+1] = b; }
    }
    u32 s = 0; for (int i = 0; i < N; ++i) s += x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void k_flt(float* out, float seed, int iters) {
    float x[N];
    for (int i = 0; i < N; ++i) x[i] = seed * (threadIdx.x + 1) * (i + 7);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < N; i += 2) { float a = fminf(x[i], x[i+1]), b = fmaxf(x[i], x[i+1]); x[i] = a; x[i+1] = -b; }
#pragma unroll
        for (int i = 1; i + 1 < N; i += 2) { float a = fminf(x[i], x[i+1]), b = fmaxf(x[i], x[i+1]); x[i] = a; x[i+1] = b; }
    }
    float s = 0; for (int i = 0; i < N; ++i) s += x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void k_dbl(double* out, double seed, int iters) {
    double x[N];
    for (int i = 0; i < N; ++i) x[i] = seed * (threadIdx.x + 1) * (i + 7);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < N; i += 2) { double a = fmin(x[i], x[i+1]), b = fmax(x[i], x[i+1]); x[i] = a; x[i+1] = -b; }
#pragma unroll
        for (int i = 1; i + 1 < N; i += 2) { double a = fmin(x[i], x[i+1]), b = fmax(x[i], x[i+1]); x[i] = a; x[i+1] = b; }
    }
    double s = 0; for (int i = 0; i < N; ++i) s += x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// half int, half float: independent chains
extern "C" __global__ void k_mix(u32* out, u32 seed, int iters) {
    u32 x[N/2]; float y[N/2];
    for (int i = 0; i < N/2; ++i) { x[i] = seed * (threadIdx.x + 1) * (i + 7); y[i] = (float)x[i]; }
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int i = 0; i < N/2; i += 2) { u32 a = min(x[i], x[i+1]), b = max(x[i], x[i+1]); x[i] = a; x[i+1] = b ^ it;
                                          float c = fminf(y[i], y[i+1]), d = fmaxf(y[i], y[i+1]); y[i] = c; y[i+1] = -d; }
#pragma unroll
        for (int i = 1; i + 1 < N/2; i += 2) { u32 a = min(x[i], x[i+1]), b = max(x[i], x[i+1]); x[i] = a; x[i+1] = b;
                                              float c = fminf(y[i], y[i+1]), d = fmaxf(y[i], y[i+1]); y[i] = c; y[i+1] = d; }
        }
    }
    u32 s = 0; for (int i = 0; i < N/2; ++i) s += x[i] + __float_as_uint(y[i]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void k_zero(float* out, float a, float b) {
    out[0] = fminf(a, b); out[1] = fmaxf(a, b); out[2] = fminf(b, a); out[3] = fmaxf(b, a);
}
