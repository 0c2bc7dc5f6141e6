// Host check of the climatology kernel's order-statistic search (`select_ranks` and `walk_sorted` in
// kernels/walk.h), for machines without a GPU: the kernel source is compiled as plain
// C++ with the CUDA built-ins replaced by host equivalents, and the search is run on seeded
// sorted groups laid out as in the kernel's ring (rows `step` apart, sentinels at both ends),
// from random stored positions and hints, against the order statistics of the sorted union.
// Ties (keys from a small range), empty groups, absent groups and every rank are covered. The
// GPU tests (`cargo test engine::` on a GPU machine) remain the real check.
//
// Build and run: tests/kernels/walk-host-check.sh
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "host_cuda_shims.h"

double sc_shared[1];

#include "climatology.hip"

template <int MAXL>
static long check(std::mt19937_64& rng, int trials) {
    typedef unsigned K;
    const int rows = 34, step = 5;
    long checked = 0;
    for (int trial = 0; trial < trials; ++trial) {
        const int tid = trial % step;  // the thread's column: 0 puts slot 0's keys at index 0
        const int nl = 1 + (int)(rng() % MAXL);
        // keys of finite floats: from a tiny range (many ties) or a wide one
        const unsigned range = trial % 3 == 0 ? 4u : trial % 3 == 1 ? 40u : 1u << 30;
        std::vector<K> keys((size_t)MAXL * rows * step + tid + 1, ~0u);
        std::vector<int> counts((size_t)MAXL * step, -1);  // slot s's count at s * step
        int base[MAXL], cnt[MAXL], slot[MAXL];
        std::vector<K> all;
        for (int j = 0; j < MAXL; ++j) {
            base[j] = 0;
            cnt[j] = 0;
            slot[j] = 0;
            if (j >= nl) continue;
            slot[j] = j;
            base[j] = j * rows * step + tid;
            cnt[j] = (int)(rng() % 33) - 2;
            if (cnt[j] < 0) cnt[j] = 0;  // some empty groups
            counts[(size_t)slot[j] * step] = cnt[j];
            std::vector<K> g(cnt[j]);
            for (auto& k : g) k = 0x00800000u + (K)(rng() % range) * 7u;
            std::sort(g.begin(), g.end());
            keys[base[j]] = 0u;
            for (int r = 0; r < cnt[j]; ++r) keys[base[j] + (r + 1) * step] = g[r];
            all.insert(all.end(), g.begin(), g.end());
        }
        std::sort(all.begin(), all.end());
        const int n = (int)all.size();
        if (n == 0) continue;
        for (int r = 1; r <= n; ++r) {
            unsigned char pos[MAXL];
            for (int j = 0; j < MAXL; ++j) pos[j] = (unsigned char)(rng() % 34);
            const bool have_hint = rng() % 4 != 0;
            const K hint = rng() % 2 ? all[rng() % n] : 0x00800000u + (K)(rng() % range) * 7u + (K)(rng() % 9);
            const bool need_next = r < n;
            K x_r = 0, x_next = 0;
            select_ranks<K, MAXL>(keys.data(), counts.data(), slot, nl, rows * step, step, tid, n, r, need_next, have_hint, hint,
                                  pos, 1, x_r, x_next);
            if (x_r != all[r - 1] || (need_next && x_next != all[r])) {
                std::printf("FAIL MAXL %d trial %d n %d r %d hint %d: got %u %u want %u %u\n", MAXL, trial, n, r,
                            (int)have_hint, x_r, x_next, all[r - 1], need_next ? all[r] : 0u);
                std::exit(1);
            }
            ++checked;
        }
    }
    return checked;
}

int main() {
    std::mt19937_64 rng(2026);
    long n = check<11>(rng, 3000) + check<12>(rng, 1000) + check<32>(rng, 200);
    std::printf("ok   select_ranks: %ld order statistics equal the sorted union's\n", n);
    return 0;
}
