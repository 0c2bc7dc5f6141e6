#include <cstdio>
#include <cuda_runtime.h>
#include "kernels2.cu"
typedef void (*K)(u32*, u32, int, u32, u32);
float timeit(K f, u32* out, int iters, int blocks, int threads) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    f<<<blocks, threads>>>(out, 3u, 10, 1u, 0xffffffffu); cudaDeviceSynchronize();
    float best = 1e9;
    for (int r = 0; r < 5; ++r) {
        cudaEventRecord(a); f<<<blocks, threads>>>(out, 3u, iters, 1u, 0xffffffffu); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
    }
    return best;
}
int main() {
    int blocks = 132 * 8, threads = 256, iters = 4000;
    u32* out; cudaMalloc(&out, blocks * threads * 4);
    double n = (double)blocks * threads * iters * 15;  // CX per iteration
    const char* names[3] = {"min+max", "min+sum(IADD3)", "min+2 mad"};
    K ks[3] = {c_mm, c_sum, c_mad};
    for (int k = 0; k < 3; ++k) { float t = timeit(ks[k], out, iters, blocks, threads); printf("%-16s %.3f ms  %.1f G CX/s\n", names[k], t, n / t / 1e6); }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
