// Host emulation of kernels/bench/baselines.hip, for machines without a GPU: the kernel source is
// compiled as plain C++ with the CUDA built-ins replaced by host equivalents, and every
// (block, thread) is run in turn. That is exact for these kernels: no thread reads another's
// data and none waits at a barrier. The results are checked against a naive reference written
// here (collect, sort, Hyndman-Fan type 5, the window plan's summation order), on a seeded
// pool with missing values, windows of N = 0..full and an odd cell count.
//
// Build and run: tests/kernels/baselines-host-check.sh
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "host_cuda_shims.h"

float sc_base_smem[1 << 22];

#include "baselines.hip"

typedef void (*Kernel)(const BaseParams);

static void launch(Kernel k, unsigned gx, unsigned gy, unsigned block, const BaseParams& p) {
    blockDim.x = block;
    for (unsigned y = 0; y < gy; ++y)
        for (unsigned x = 0; x < gx; ++x)
            for (unsigned t = 0; t < block; ++t) {
                blockIdx.x = x;
                blockIdx.y = y;
                threadIdx.x = t;
                k(p);
            }
}

// Type 5 position for p = 9/10 exactly as src/percentile.rs computes it (24ths, integers).
static void type5(int n, int& lo, double& frac) {
    const long long a = 9, b = 10, alpha = 12, beta = 12;
    const long long num = a * (24 * (n + 1) - alpha - beta) + alpha * b, den = 24 * b;
    const long long k = num / den, rem = num % den;
    frac = 0.0;
    if (k < 1) lo = 1;
    else if (k >= n || rem == 0) lo = (int)std::min<long long>(k, n);
    else { lo = (int)k; frac = (double)rem / (double)den; }
}

static double lerp(double lo, double hi, double f) {
    double d = hi - lo;
    return f < 0.5 ? lo + d * f : hi - d * (1.0 - f);
}

int main() {
    const int years = 7, targets = 23, window = 11, days = targets + window - 1, cells = 77;
    std::mt19937_64 rng(12345);
    std::vector<float> pool((size_t)days * years * cells, NAN);
    for (int c = 0; c < cells; ++c) {
        const double keep = c % 7 == 0 ? 0.0 : c % 7 == 1 ? 0.03 : c % 7 == 2 ? 0.3 : 0.92;
        const double level = 5.0 + (double)(rng() % 25);
        for (int r = 0; r < days * years; ++r)
            if ((double)(rng() % 10000) / 10000.0 < keep)
                pool[(size_t)r * cells + c] = (float)(level + (double)(rng() % 300) * 0.01);
    }
    const int max_n = window * years;
    std::vector<int> pos_lo(max_n + 1, 0), win(targets);
    std::vector<double> pos_frac(max_n + 1, 0.0);
    for (int n = 1; n <= max_n; ++n) type5(n, pos_lo[n], pos_frac[n]);
    for (int t = 0; t < targets; ++t) win[t] = t;
    // reference
    std::vector<double> ref_mean((size_t)targets * cells), ref_p90((size_t)targets * cells), ref_cf((size_t)targets * cells);
    std::vector<unsigned> ref_n((size_t)targets * cells);
    for (int t = 0; t < targets; ++t)
        for (int c = 0; c < cells; ++c) {
            std::vector<double> xs;
            double total = 0.0;
            for (int w = 0; w < window; ++w) {
                double s = 0.0;
                for (int y = 0; y < years; ++y) {
                    float v = pool[((size_t)(win[t] + w) * years + y) * cells + c];
                    if (std::isfinite(v)) { xs.push_back(v); s += v; }
                }
                total += s;
            }
            const size_t o = (size_t)t * cells + c;
            const int n = (int)xs.size();
            ref_n[o] = n;
            if (n == 0) { ref_mean[o] = ref_p90[o] = ref_cf[o] = NAN; continue; }
            std::sort(xs.begin(), xs.end());
            ref_mean[o] = total / n;
            int lo; double f; type5(n, lo, f);
            ref_p90[o] = f == 0.0 ? xs[lo - 1] : lerp(xs[lo - 1], xs[lo], f);
            // Cornish-Fisher from two-pass central moments (the textbook definition)
            double mu = 0.0; for (double x : xs) mu += x; mu /= n;
            double c2 = 0, c3 = 0, c4 = 0;
            for (double x : xs) { double d = x - mu; c2 += d * d; c3 += d * d * d; c4 += d * d * d * d; }
            c2 /= n; c3 /= n; c4 /= n;
            const double z = 1.2815515655446004;
            if (n < 2 || c2 <= 0) { ref_cf[o] = mu; continue; }
            const double sd = std::sqrt(c2), g1 = c3 / (c2 * sd), g2 = c4 / (c2 * c2) - 3.0;
            ref_cf[o] = mu + sd * (z + (z * z - 1) * g1 / 6 + (z * z * z - 3 * z) * g2 / 24 - (2 * z * z * z - 5 * z) * g1 * g1 / 36);
        }
    std::vector<double> out_mean((size_t)targets * cells), out_pct((size_t)targets * cells);
    std::vector<unsigned> out_n((size_t)targets * cells);
    std::vector<double> moments((size_t)5 * days * cells);
    BaseParams p{};
    p.pool = pool.data(); p.out_mean = out_mean.data(); p.out_pct = out_pct.data(); p.out_count = out_n.data();
    p.win_day0 = win.data(); p.pos_lo = pos_lo.data(); p.pos_frac = pos_frac.data(); p.moments = moments.data();
    p.n_cells = cells; p.z = 1.2815515655446004; p.years = years; p.window = window; p.n_targets = targets;
    p.n_days = days; p.max_n = max_n; p.min_samples = 1; p.batch = 10;
    int failures = 0;
    auto poison = [&] {
        std::fill(out_mean.begin(), out_mean.end(), -12345.0);
        std::fill(out_pct.begin(), out_pct.end(), -12345.0);
        std::fill(out_n.begin(), out_n.end(), 0xffffffffu);
    };
    auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 8) == 0; };
    auto exact = [&](const char* name) {
        int bad = 0;
        for (size_t o = 0; o < out_n.size(); ++o)
            if (out_n[o] != ref_n[o] || !same(out_mean[o], ref_mean[o]) || !same(out_pct[o], ref_p90[o])) {
                if (bad++ < 5) std::printf("  %s at %zu: n %u/%u mean %.17g/%.17g p90 %.17g/%.17g\n", name, o, out_n[o],
                                           ref_n[o], out_mean[o], ref_mean[o], out_pct[o], ref_p90[o]);
            }
        std::printf("%s %s: %d of %zu differ from the reference\n", bad ? "FAIL" : "ok  ", name, bad, out_n.size());
        failures += bad != 0;
    };
    poison();
    launch(sstclim_base_topk_f32_k34, (cells + 255) / 256, targets, 256, p);
    exact("(a) top-K");
    for (unsigned tile : {16u, 32u}) {
        poison();
        launch(sstclim_base_tblock_f32, (cells + tile - 1) / tile, (targets + 9) / 10, tile, p);
        char name[64];
        std::snprintf(name, sizeof name, "(b) temporal blocking, tile %u", tile);
        exact(name);
    }
    poison();
    launch(sstclim_base_moments_f32, (cells + 255) / 256, days, 256, p);
    launch(sstclim_base_cf_f32, (cells + 255) / 256, 1, 256, p);
    double mean_err = 0, cf_err = 0, cf_vs_exact = 0;
    int bad = 0;
    for (size_t o = 0; o < out_n.size(); ++o) {
        if (out_n[o] != ref_n[o] || std::isnan(out_mean[o]) != std::isnan(ref_mean[o]) ||
            std::isnan(out_pct[o]) != std::isnan(ref_cf[o])) { ++bad; continue; }
        if (std::isnan(ref_mean[o])) continue;
        mean_err = std::max(mean_err, std::fabs(out_mean[o] - ref_mean[o]));
        cf_err = std::max(cf_err, std::fabs(out_pct[o] - ref_cf[o]));
        cf_vs_exact = std::max(cf_vs_exact, std::fabs(out_pct[o] - ref_p90[o]));
    }
    const bool ok = bad == 0 && mean_err < 1e-9 && cf_err < 1e-6;
    std::printf("%s (c) Cornish-Fisher: %d validity/count mismatches; mean max abs %.3g; quantile vs the two-pass "
                "textbook formula max abs %.3g; vs the exact P90 max abs %.3g\n",
                ok ? "ok  " : "FAIL", bad, mean_err, cf_err, cf_vs_exact);
    failures += !ok;
    return failures ? 1 : 0;
}
