#include <cstdio>
#include <cuda_runtime.h>
#include "kernels.cu"
template <typename F, typename T>
float timeit(F f, T* out, T seed, int iters, int blocks, int threads) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    f<<<blocks, threads>>>(out, seed, 10); cudaDeviceSynchronize();
    float best = 1e9;
    for (int r = 0; r < 5; ++r) {
        cudaEventRecord(a); f<<<blocks, threads>>>(out, seed, iters); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
    }
    return best;
}
int main() {
    int blocks = 132 * 8, threads = 256, iters = 4000;
    void* out; cudaMalloc(&out, blocks * threads * 8);
    double n = (double)blocks * threads * iters;
    float ti = timeit(k_int, (unsigned*)out, 3u, iters, blocks, threads);
    float tf = timeit(k_flt, (float*)out, 1.5f, iters, blocks, threads);
    float td = timeit(k_dbl, (double*)out, 1.5, iters, blocks, threads);
    float tm = timeit(k_mix, (unsigned*)out, 3u, iters, blocks, threads);
    // ops per iteration: int 30 IMNMX, flt 30 FMNMX, dbl 30 min/max (DSETP+FSEL), mix 28 int + 28 float
    printf("int  %.3f ms  %.3f Gop/s (VIMNMX)\n", ti, n * 30 / ti / 1e6);
    printf("flt  %.3f ms  %.3f Gop/s (FMNMX)\n", tf, n * 30 / tf / 1e6);
    printf("dbl  %.3f ms  %.3f Gop/s (DSETP+FSEL)\n", td, n * 30 / td / 1e6);
    printf("mix  %.3f ms  %.3f Gop/s (28 int + 28 float per iteration)\n", tm, n * 56 / tm / 1e6);
    float h[4]; float* z = (float*)out;
    k_zero<<<1, 1>>>(z, -0.0f, 0.0f); cudaMemcpy(h, z, 16, cudaMemcpyDeviceToHost);
    printf("fminf(-0,+0)=%08x fmaxf(-0,+0)=%08x fminf(+0,-0)=%08x fmaxf(+0,-0)=%08x\n", *(unsigned*)&h[0], *(unsigned*)&h[1], *(unsigned*)&h[2], *(unsigned*)&h[3]);
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
