// Host check of the whole climatology kernel (kernels/climatology.hip), for machines without a
// GPU: the kernel source is compiled as plain C++ with the CUDA built-ins replaced by host
// equivalents (tests/kernels/host_cuda_shims.h), and each of its threads is run in turn over
// every block of a seeded job laid out as the CUDA backend lays it out (pool rows [day][year][cell],
// one batch, a ring of 2h + 1 slots, group g in slot g mod (2h + 1)). Every output (count,
// mean and percentile of every cell and target day) must equal a naive reference bit for bit:
// the window's valid samples sorted, the positions from the same tables, the same
// interpolation and the canonical summation order. The data has missing values at random,
// cells and days missing in every year, cells with a handful of samples, ties and negative
// values; the grid does not fill the last block. It runs the kernel as the HIP build compiles it
// (every constant from its arguments) and, built with -DSC_K_... as
// tests/kernels/kernel-host-check.sh does, as the CUDA backend compiles it for a job.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "host_cuda_shims.h"

#include "climatology.hip"

double sc_shared[1 << 16];

#ifndef KERNEL
#define KERNEL sstclim_clim_f32_l11
#define SAMPLE float
#endif
#ifndef YEARS
#define YEARS 30
#endif
#ifndef CELLS
#define CELLS 300
#endif
#ifndef BLOCK
#define BLOCK 64
#endif
#ifndef RING_GLOBAL
#define RING_GLOBAL 1
#endif
#ifndef POOL_STRIDE
#define POOL_STRIDE (CELLS + 7)
#endif

#define STR2(x) #x
#define STR(x) STR2(x)
#ifndef NPCT
#define NPCT 1  // 1: P90; 2: P10 and P90
#endif
#ifndef MAXL_K
#define MAXL_K 11  // the kernel's groups per target (its target lists' stride)
#endif
#ifdef INT16
// an int16 pool: integers round(100 v) (-32768: missing), decoded through a table, v = i * SCALE
// + 273.15; the ordered kernel (POLICY sc_i16_ordered) needs SCALE > 0
#ifndef SCALE
#define SCALE 0.01
#endif
typedef short T;
#else
typedef SAMPLE T;
#endif
#ifndef POLICY
#define POLICY T  // the kernel's sample policy (Compute<POLICY>): the pool type, or sc_i16_ordered
#endif
static std::vector<double> lut;
static double decode(T x) {
#ifdef INT16
    return lut[(int)x + 32768];
#else
    return (double)x;
#endif
}

// the CPU engine's lerp (src/percentile.rs)
static double lerp(double lo, double hi, double f) {
    return f < 0.5 ? lo + (hi - lo) * f : hi - (hi - lo) * (1.0 - f);
}

int main() {
    const int years = YEARS, half = 5, days = 30, cells = CELLS, bc = BLOCK, ring = 2 * half + 1;
    const int n_targets = days - 2 * half, maxl = MAXL_K, nl = ring, rows = years + 2;
    const long stride = POOL_STRIDE;
    const double pcts[2] = {NPCT == 1 ? 0.9 : 0.1, 0.9};
    std::mt19937_64 rng(2026);
    std::vector<T> pool((size_t)days * years * stride, (T)0);
#ifdef INT16
    lut.resize(65536);
    for (int i = 0; i < 65536; ++i) lut[i] = i == 0 ? NAN : (i - 32768) * SCALE + 273.15;
    const T nan = (T)-32768;
#else
    const T nan = (T)NAN;
#endif
    for (int c = 0; c < cells; ++c) {
        const int kind = c % 23;                                // 0: land; 1: few samples; 2: ties
        const double base = 10.0 * std::sin(0.1 * c) - 1.0;    // some negative values
        for (int d = 0; d < days; ++d)
            for (int y = 0; y < years; ++y) {
                double v = base + 0.05 * d + std::normal_distribution<double>(0.0, 1.5)(rng);
                if (kind == 2) v = std::round(v);  // many ties
                bool missing = rng() % 50 == 0 || kind == 0 || (kind == 1 && rng() % 20 != 0) ||
                               (d == 13 && c % 3 == 0);  // a day missing in every year
                if (v == 0.0) v = 0.25;                  // no signed zeros: the reference sorts by value
#ifdef INT16
                pool[((size_t)d * years + y) * stride + c] = missing ? nan : (T)std::lround(v * 100.0);
#else
                pool[((size_t)d * years + y) * stride + c] = missing ? nan : (T)v;
#endif
            }
    }
    // groups: day g's rows, in year order; targets: days t .. t + 2h
    std::vector<int> group_off(days + 1), group_rows(days * years), group_first(days);
    for (int g = 0; g <= days; ++g) group_off[g] = g * years;
    for (int r = 0; r < days * years; ++r) group_rows[r] = r;
    for (int g = 0; g < days; ++g) group_first[g] = g * years;
    std::vector<int> loads(2 * days), load_start(n_targets + 1), target_lists(n_targets * maxl), target_nl(n_targets);
    for (int g = 0; g < days; ++g) {
        loads[2 * g] = g;
        loads[2 * g + 1] = g % ring;
    }
    load_start[0] = 0;
    for (int t = 0; t < n_targets; ++t) {
        load_start[t + 1] = t + 2 * half + 1;
        target_nl[t] = nl;
        for (int j = 0; j < maxl; ++j) target_lists[t * maxl + j] = j < nl ? (t + j) % ring : 0;
    }
    const int max_n = ring * years;
    std::vector<int> pos_lo((max_n + 1) * NPCT);
    std::vector<double> pos_frac((max_n + 1) * NPCT);
    for (int n = 0; n <= max_n; ++n)
        for (int i = 0; i < NPCT; ++i) {  // Hyndman-Fan type 5: p n + 1/2, clamped to the ends
            const double pos = pcts[i] * n + 0.5;
            int lo = (int)std::floor(pos);
            double frac = pos - lo;
            if (lo < 1) lo = 1, frac = 0.0;
            if (lo >= n) lo = n < 1 ? 1 : n, frac = 0.0;
            pos_lo[n * NPCT + i] = lo;
            pos_frac[n * NPCT + i] = frac;
        }
    const int blocks = (cells + bc - 1) / bc;
    typedef Keys<Compute<POLICY>::type>::K K;
    std::vector<K> ring_keys(RING_GLOBAL ? (size_t)blocks * ring * rows * bc : 1);
    std::vector<double> out_values((size_t)(1 + NPCT) * n_targets * cells, -7.0);
    std::vector<unsigned> out_counts((size_t)n_targets * cells, 7u);
    ClimParams p;
    std::memset(&p, 0, sizeof p);
    p.pool = pool.data();
    p.out_values = out_values.data();
    p.out_counts = out_counts.data();
    p.load_start = load_start.data();
    p.loads = loads.data();
    p.target_lists = target_lists.data();
    p.target_nl = target_nl.data();
    p.group_off = group_off.data();
    p.group_rows = group_rows.data();
    p.group_first = group_first.data();
    p.pos_lo = pos_lo.data();
    p.pos_frac = pos_frac.data();
    p.ring_global = RING_GLOBAL ? ring_keys.data() : nullptr;
    p.lut = lut.empty() ? nullptr : lut.data();
    p.pool_stride = stride;
    p.out_cell_stride = cells;
    p.n_cells = cells;
    p.out_cell0 = 0;
    p.n_batch = n_targets;
    p.out_target0 = 0;
    p.out_targets = n_targets;
    p.n_pct = NPCT;
    p.max_n = max_n;
    p.min_samples = 1;
    p.rows = rows;
    p.ring = ring;
    p.use_hints = 1;
    blockDim.x = bc;
    for (unsigned b = 0; b < (unsigned)blocks; ++b) {
        blockIdx.x = b;
        // each thread touches only its own cell's shared memory and ring column: one at a time
        for (unsigned tid = 0; tid < (unsigned)bc; ++tid) {
            threadIdx.x = tid;
            KERNEL(p);
        }
    }
    long checked = 0, bad = 0;
    for (int t = 0; t < n_targets; ++t)
        for (int c = 0; c < cells; ++c) {
            std::vector<double> v;
            double total = 0.0;
            for (int j = 0; j < nl; ++j) {
                double sum = 0.0;
                for (int y = 0; y < years; ++y) {
                    const double x = decode(pool[((size_t)(t + j) * years + y) * stride + c]);
                    if (std::isfinite(x)) {
                        sum += x;
                        v.push_back(x);
                    }
                }
                total += sum;
            }
            std::sort(v.begin(), v.end());
            const int n = (int)v.size();
            auto same = [](double a, double b) { return std::memcmp(&a, &b, 8) == 0 || (std::isnan(a) && std::isnan(b)); };
            const double want_mean = n > 0 ? total / n : NAN, got_mean = out_values[(size_t)t * cells + c];
            bool ok = out_counts[(size_t)t * cells + c] == (unsigned)n && same(got_mean, want_mean);
            for (int i = 0; i < NPCT; ++i) {
                double want_p = NAN;
                if (n > 0) {
                    const int lo = pos_lo[n * NPCT + i];
                    const double f = pos_frac[n * NPCT + i];
                    want_p = f == 0.0 ? v[lo - 1] : lerp(v[lo - 1], v[lo], f);
                }
                const double got_p = out_values[(size_t)((1 + i) * n_targets + t) * cells + c];
                if (!same(got_p, want_p)) {
                    ok = false;
                    if (bad < 5) std::printf("  percentile %d: %.17g, want %.17g\n", i, got_p, want_p);
                }
            }
            if (!ok && bad++ < 5)
                std::printf("FAIL target %d cell %d: n %u/%d mean %.17g/%.17g\n", t, c, out_counts[(size_t)t * cells + c], n,
                            got_mean, want_mean);
            checked += 2 + NPCT;
        }
    if (bad) {
        std::printf("FAIL %s: %ld of %ld (target, cell) outputs differ\n", STR(KERNEL), bad, checked / (2 + NPCT));
        return 1;
    }
    std::printf("ok   %s: %ld values equal the naive reference\n", STR(KERNEL), checked);
    return 0;
}
