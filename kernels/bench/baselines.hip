// baselines.hip: three GPU designs from the project's source documents, reimplemented as
// baselines for `sstclim bench-baselines` (one source for HIP and CUDA, like ../climatology.hip).
//
//   (a) sstclim_base_topk_f32_k{34,64}   document 003: one thread per (cell, target day) on a
//       2-D grid (x: cells, y: target days), reading its window's samples straight from device
//       memory, keeping the K largest in a register-resident descending array (guarded,
//       branch-free insertion), mean in the same pass.
//   (b) sstclim_base_tblock_f32          document 001: temporal blocking. A block is a tile of
//       cells (one thread each) and a batch of B consecutive target days; the batch's union of
//       window days (B + 2h = 20 days x all years for B = 10) is staged in shared memory once,
//       then each thread gathers each target's samples and runs a quickselect.
//   (c) sstclim_base_moments_f32 + sstclim_base_cf_f32   document 000: per-day sums of
//       x, x^2, x^3, x^4 and the count over years, then per cell a sliding 11-day window sum of
//       those and the 4-moment Cornish-Fisher quantile. Fast and approximate.
//
// Pool: float32, `[row][cell]`, row = day * years + year (the `[day][year]` order of the
// window plan, every date present), missing values NaN (any non-finite value is missing, as
// in the climatology kernel). Outputs: `[target][cell]` mean and percentile (float64; NaN where
// fewer than `min_samples` samples are valid) and counts.
//
// (a) and (b) equal the CPU engine bit for bit: the same order statistics (type 5, or any
// method, through the same position table), the CPU engine's interpolation with non-fused IEEE
// operations, and the window plan's canonical summation order for the mean (per day over years
// in float64, then the day sums in window order). Corrections to the documents' code are
// listed in src/bench/baseline_kernels.rs.
// kernels/sstclim_port.h: compile with -I kernels (NVRTC: pasted in by baseline_kernels.rs)
#include "sstclim_port.h"

// Kernel arguments; mirrored by `BaseParams` in src/bench/baseline_kernels.rs (same order and sizes).
struct BaseParams {
    const float* pool;       // [day * years + year][cell]
    double* out_mean;        // [target][cell]
    double* out_pct;         // [target][cell]
    sc_u32* out_count;       // [target][cell]
    const int* win_day0;     // per target: first pool day of its window
    const int* pos_lo;       // [n]: 1-based rank of the lower order statistic
    const double* pos_frac;  // [n]: interpolation weight towards rank + 1
    double* moments;         // (c): [moment 0..4][day][cell]
    sc_i64 n_cells;
    double z;                // (c): standard normal quantile of the percentile
    int years;
    int window;              // days per window (2h + 1)
    int n_targets;
    int n_days;              // pool days
    int max_n;               // largest n in the position tables
    int min_samples;
    int batch;               // (b): target days per block
    int pad_;
};

// Loads issued together before their values are used (memory-level parallelism per thread).
#define SC_BASE_CHUNK 8

SC_DEVICE bool sc_finite(float v) { return (sc_float_bits(v) & 0x7f800000u) != 0x7f800000u; }

SC_DEVICE double sc_nan() { return sc_bits_double(0x7ff8000000000000ull); }

// The CPU engine's interpolation (src/percentile.rs `lerp`), exact at both ends.
SC_DEVICE double sc_base_lerp(double lo, double hi, double frac) {
    double diff = sc_sub(hi, lo);
    return frac < 0.5 ? sc_add(lo, sc_mul(diff, frac)) : sc_sub(hi, sc_mul(diff, sc_sub(1.0, frac)));
}

// ---------------------------------------------------------------------------------------------
// (a) register top-K insertion, one thread per (cell, target day)
// ---------------------------------------------------------------------------------------------

// Insert `v` into the descending array `top` (K largest so far), dropping the smallest. The
// guard skips a sample smaller than all K (a warp skips when all its lanes do); the body is
// branch-free, two instructions a slot: new top[i] = max(top[i], min(v, top[i-1])) (every index
// is a compile-time constant, so the array stays in registers). Document 003's loop did a
// compare-and-swap per slot and wrote top[K], one past the end; this is the same insertion,
// in bounds.
template <int K>
SC_DEVICE void topk_insert(float (&top)[K], float v) {
    if (v > top[K - 1]) {
#pragma unroll
        for (int i = K - 1; i > 0; --i) top[i] = fmaxf(top[i], fminf(v, top[i - 1]));
        top[0] = fmaxf(top[0], v);
    }
}

template <int K>
SC_DEVICE void base_topk(const BaseParams& p) {
    const sc_i64 cell = (sc_i64)blockIdx.x * blockDim.x + threadIdx.x;
    const int t = blockIdx.y;
    if (cell >= p.n_cells || t >= p.n_targets) return;
    const float neg_inf = sc_bits_float(0xff800000u);
    float top[K];
#pragma unroll
    for (int i = 0; i < K; ++i) top[i] = neg_inf;
    const int d0 = __ldg(p.win_day0 + t);
    double total = 0.0;
    int n = 0;
    const float nan = sc_bits_float(0x7fc00000u);
    for (int w = 0; w < p.window; ++w) {
        const float* __restrict__ rows = p.pool + ((sc_i64)(d0 + w) * p.years) * p.n_cells + cell;
        double day_sum = 0.0;
        // years in chunks: a chunk's loads are issued together, then its samples inserted
        for (int y0 = 0; y0 < p.years; y0 += SC_BASE_CHUNK) {
            float v[SC_BASE_CHUNK];
#pragma unroll
            for (int j = 0; j < SC_BASE_CHUNK; ++j)
                v[j] = y0 + j < p.years ? __ldg(rows + (sc_i64)(y0 + j) * p.n_cells) : nan;
#pragma unroll
            for (int j = 0; j < SC_BASE_CHUNK; ++j) {
                if (sc_finite(v[j])) {
                    day_sum = sc_add(day_sum, (double)v[j]);
                    ++n;
                    topk_insert<K>(top, v[j]);
                }
            }
        }
        total = sc_add(total, day_sum);
    }
    const sc_i64 o = (sc_i64)t * p.n_cells + cell;
    p.out_count[o] = (sc_u32)n;
    if (n == 0 || n < p.min_samples) {
        p.out_mean[o] = sc_nan();
        p.out_pct[o] = sc_nan();
        return;
    }
    p.out_mean[o] = sc_div(total, (double)n);
    // x(lo) is the (n - lo + 1)-th largest: top[n - lo]; x(lo + 1) is top[n - lo - 1]. The host
    // checked that n - lo < K for every n up to max_n.
    const int lo = __ldg(p.pos_lo + n);
    const double frac = __ldg(p.pos_frac + n);
    const int idx = n - lo;
    float a = top[0], b = top[0];
#pragma unroll
    for (int i = 0; i < K; ++i) {
        a = i == idx ? top[i] : a;
        b = i == idx - 1 ? top[i] : b;
    }
    p.out_pct[o] = frac == 0.0 ? (double)a : sc_base_lerp((double)a, (double)b, frac);
}

// ---------------------------------------------------------------------------------------------
// (b) temporal blocking: stage a batch's window days in shared memory, quickselect per thread
// ---------------------------------------------------------------------------------------------

// The k-th smallest (0-based) of s[0..n) (stride `step`), by document 001's iterative Hoare
// quickselect with the middle element as pivot; `s` is permuted.
SC_DEVICE float quickselect(float* s, int step, int n, int k) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const float pivot = s[((lo + hi) >> 1) * step];
        int a = lo, b = hi;
        while (a <= b) {
            while (s[a * step] < pivot) ++a;
            while (s[b * step] > pivot) --b;
            if (a <= b) {
                const float t = s[a * step];
                s[a * step] = s[b * step];
                s[b * step] = t;
                ++a;
                --b;
            }
        }
        if (k <= b) {
            hi = b;
        } else if (k >= a) {
            lo = a;
        } else {
            break;
        }
    }
    return s[k * step];
}

// Shared memory (dynamic): the staged rows `[row][tid]` (row = staged day * years + year), then
// each thread's scratch of up to max_n samples, `[i][tid]`. Both are indexed with the thread
// fastest, so lanes reading the same row, or *different* scratch entries, never share a bank:
// no padding is needed (document 001's `smem[grid * T + tid]` had the same layout).
SC_DEVICE void base_tblock(const BaseParams& p) {
    extern __shared__ float sc_base_smem[];
    const int tile = blockDim.x, tid = threadIdx.x;
    const sc_i64 cell = (sc_i64)blockIdx.x * tile + tid;
    const bool live = cell < p.n_cells;
    const int t0 = blockIdx.y * p.batch;
    const int t1 = t0 + p.batch < p.n_targets ? t0 + p.batch : p.n_targets;
    // the batch's days: from its first window's start to its last window's end
    int dmin = 0x7fffffff, dmax = -1;
    for (int t = t0; t < t1; ++t) {
        const int d = __ldg(p.win_day0 + t);
        dmin = d < dmin ? d : dmin;
        dmax = d > dmax ? d : dmax;
    }
    const int span = dmax + p.window - dmin;  // B + 2h days when the batch is consecutive
    const int rows = span * p.years;
    float* stage = sc_base_smem;
    float* scratch = sc_base_smem + rows * tile;
    // Phase 1: stage. Each thread loads its own cell of every row (lanes read consecutive
    // cells: coalesced). Document 001 strided the rows over the threads while each thread kept
    // its own cell, so only every T-th row of a cell was loaded; each thread reads only its
    // own column, so no barrier is needed either.
    const float* __restrict__ src = p.pool + (sc_i64)dmin * p.years * p.n_cells + cell;
    const float nan = sc_bits_float(0x7fc00000u);
    if (!live) {
        for (int r = 0; r < rows; ++r) stage[r * tile + tid] = nan;
        return;
    }
    for (int r0 = 0; r0 < rows; r0 += SC_BASE_CHUNK) {
        float v[SC_BASE_CHUNK];
#pragma unroll
        for (int j = 0; j < SC_BASE_CHUNK; ++j) v[j] = r0 + j < rows ? __ldg(src + (sc_i64)(r0 + j) * p.n_cells) : nan;
#pragma unroll
        for (int j = 0; j < SC_BASE_CHUNK; ++j)
            if (r0 + j < rows) stage[(r0 + j) * tile + tid] = v[j];
    }
    // Phase 2: each target of the batch from shared memory
    for (int t = t0; t < t1; ++t) {
        const int off = __ldg(p.win_day0 + t) - dmin;
        int n = 0;
        double total = 0.0;
        for (int w = 0; w < p.window; ++w) {
            // rows are [day][year] (document 001 indexed them as [year][day])
            const float* day = stage + ((off + w) * p.years) * tile + tid;
            double day_sum = 0.0;
            for (int y = 0; y < p.years; ++y) {
                const float v = day[y * tile];
                if (sc_finite(v)) {
                    scratch[n * tile + tid] = v;
                    ++n;
                    day_sum = sc_add(day_sum, (double)v);
                }
            }
            total = sc_add(total, day_sum);
        }
        const sc_i64 o = (sc_i64)t * p.n_cells + cell;
        p.out_count[o] = (sc_u32)n;
        if (n == 0 || n < p.min_samples) {
            p.out_mean[o] = sc_nan();
            p.out_pct[o] = sc_nan();
            continue;
        }
        p.out_mean[o] = sc_div(total, (double)n);
        const int lo = __ldg(p.pos_lo + n);
        const double frac = __ldg(p.pos_frac + n);
        float* s = scratch + tid;
        const float a = quickselect(s, tile, n, lo - 1);
        double v = (double)a;
        if (frac != 0.0) {
            // after the select, s[lo..n) holds the values at or above x(lo): x(lo + 1) is their
            // minimum (document 001 ran a second quickselect for it)
            float b = s[lo * tile];
            for (int i = lo + 1; i < n; ++i) {
                const float x = s[i * tile];
                b = x < b ? x : b;
            }
            v = sc_base_lerp((double)a, (double)b, frac);
        }
        p.out_pct[o] = v;
    }
}

// ---------------------------------------------------------------------------------------------
// (c) per-day moments, sliding window sums and the Cornish-Fisher quantile
// ---------------------------------------------------------------------------------------------

// One thread per (cell, pool day): sums over years of x^0..x^4 in float64. Document 000 summed
// float32 powers; for SST near 25 C, x^4 ~ 4e5 and the central fourth moment is obtained by
// cancellation from raw moments, which float32 cannot carry (relative error ~1e-7 of 4e5
// against a result of sigma^4 ~ 1e-2..1).
SC_DEVICE void base_moments(const BaseParams& p) {
    const sc_i64 cell = (sc_i64)blockIdx.x * blockDim.x + threadIdx.x;
    const int d = blockIdx.y;
    if (cell >= p.n_cells || d >= p.n_days) return;
    const float* __restrict__ rows = p.pool + (sc_i64)d * p.years * p.n_cells + cell;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0;
    const float nan = sc_bits_float(0x7fc00000u);
    for (int y0 = 0; y0 < p.years; y0 += SC_BASE_CHUNK) {
        float v[SC_BASE_CHUNK];
#pragma unroll
        for (int j = 0; j < SC_BASE_CHUNK; ++j) v[j] = y0 + j < p.years ? __ldg(rows + (sc_i64)(y0 + j) * p.n_cells) : nan;
#pragma unroll
        for (int j = 0; j < SC_BASE_CHUNK; ++j) {
            if (sc_finite(v[j])) {
                const double x = (double)v[j], x2 = x * x;
                s0 += 1.0;
                s1 += x;
                s2 += x2;
                s3 += x2 * x;
                s4 += x2 * x2;
            }
        }
    }
    const sc_i64 plane = (sc_i64)p.n_days * p.n_cells;
    double* m = p.moments + (sc_i64)d * p.n_cells + cell;
    m[0] = s0;
    m[plane] = s1;
    m[2 * plane] = s2;
    m[3 * plane] = s3;
    m[4 * plane] = s4;
}

// One thread per cell, walking the targets in order: the window's sums are the previous
// window's plus the entering day minus the leaving day (recomputed when windows do not move by
// one day). Population moments, as in document 000; its kurtosis numerator had `+ mean^4`
// where the expansion of E[(x - mean)^4] gives `+ 3 mean^4` (central moments are formed below
// from raw moments: c4 = m4 - 4 mu m3 + 6 mu^2 m2 - 3 mu^4). Its Cornish-Fisher expansion is
// the standard one to third order:
//   w = z + (z^2 - 1) g1 / 6 + (z^3 - 3z) g2 / 24 - (2z^3 - 5z) g1^2 / 36,   q = mu + sigma w
// with g1 the skewness and g2 the excess kurtosis. Degenerate windows (n < 2 or zero variance),
// where the document divides by zero, get q = mu. "Zero" is relative: variance formed from raw
// power sums (and slid by add/subtract) keeps rounding noise of about 1e-16 * mu^2, and for a
// window of equal values that noise, cubed and squared in the skewness and kurtosis, sends the
// quantile to 1e8 (measured on the H200: P90 max error 1.9e8 before this guard).
SC_DEVICE void base_cf(const BaseParams& p) {
    const sc_i64 cell = (sc_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= p.n_cells) return;
    const sc_i64 plane = (sc_i64)p.n_days * p.n_cells;
    const double* m = p.moments + cell;
    double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    int prev = -2;
    const double z = p.z;
    for (int t = 0; t < p.n_targets; ++t) {
        const int d0 = __ldg(p.win_day0 + t);
        if (d0 == prev + 1) {
            const sc_i64 in = (sc_i64)(d0 + p.window - 1) * p.n_cells, out = (sc_i64)prev * p.n_cells;
#pragma unroll
            for (int k = 0; k < 5; ++k) s[k] += m[k * plane + in] - m[k * plane + out];
        } else {
#pragma unroll
            for (int k = 0; k < 5; ++k) {
                double acc = 0.0;
                for (int w = 0; w < p.window; ++w) acc += m[k * plane + (sc_i64)(d0 + w) * p.n_cells];
                s[k] = acc;
            }
        }
        prev = d0;
        const int n = (int)(s[0] + 0.5);
        const sc_i64 o = (sc_i64)t * p.n_cells + cell;
        p.out_count[o] = (sc_u32)n;
        if (n == 0 || n < p.min_samples) {
            p.out_mean[o] = sc_nan();
            p.out_pct[o] = sc_nan();
            continue;
        }
        const double inv = 1.0 / (double)n;
        const double mu = s[1] * inv, m2 = s[2] * inv, m3 = s[3] * inv, m4 = s[4] * inv;
        const double mu2 = mu * mu;
        const double c2 = m2 - mu2;
        const double c3 = m3 - 3.0 * mu * m2 + 2.0 * mu2 * mu;
        const double c4 = m4 - 4.0 * mu * m3 + 6.0 * mu2 * m2 - 3.0 * mu2 * mu2;
        double q = mu;
        if (n >= 2 && c2 > 1e-12 * (mu2 > 1.0 ? mu2 : 1.0)) {
            const double sd = sqrt(c2);
            const double g1 = c3 / (c2 * sd);
            const double g2 = c4 / (c2 * c2) - 3.0;
            const double z2 = z * z, z3 = z2 * z;
            const double w = z + (z2 - 1.0) * g1 / 6.0 + (z3 - 3.0 * z) * g2 / 24.0 - (2.0 * z3 - 5.0 * z) * g1 * g1 / 36.0;
            q = mu + sd * w;
        }
        p.out_mean[o] = mu;
        p.out_pct[o] = q;
    }
}

// The entry points the bench loads by name. A run-time compiler builds only the one it needs
// (-DSC_SELECT -DSC_WANT_<name>); hipcc builds them all.
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_base_topk_f32_k34)
extern "C" __global__ void __launch_bounds__(256) sstclim_base_topk_f32_k34(const BaseParams p) { base_topk<34>(p); }
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_base_topk_f32_k64)
extern "C" __global__ void __launch_bounds__(256) sstclim_base_topk_f32_k64(const BaseParams p) { base_topk<64>(p); }
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_base_tblock_f32)
extern "C" __global__ void __launch_bounds__(1024) sstclim_base_tblock_f32(const BaseParams p) { base_tblock(p); }
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_base_moments_f32)
extern "C" __global__ void __launch_bounds__(256) sstclim_base_moments_f32(const BaseParams p) { base_moments(p); }
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_base_cf_f32)
extern "C" __global__ void __launch_bounds__(256) sstclim_base_cf_f32(const BaseParams p) { base_cf(p); }
#endif
