// climatology.hip: the temporal-blocking climatology kernel, one source for HIP and CUDA.
//
// One thread owns one cell and walks a batch of consecutive target days. Each target day's
// samples are the union of its window's groups (one group = one window day over all years).
// A group is loaded from the pool once, turned into order-preserving integer keys, sorted in
// registers and staged in shared memory (LDS), where it stays in a ring slot for as long as any
// target of the batch still needs it: with a half window of 5, every group is read from device
// memory once per batch and reused by up to 11 target days.
//
// Shared memory holds, per ring slot and per cell, the group's sorted keys between two
// sentinels (row 0: smallest key, rows after the last valid sample: largest key), its valid
// count and its float64 sum. Where LDS is too small to keep enough cells resident, the keys
// move to a per-block area of device memory with the same layout and the rest stays in LDS.
// The layout is [slot][row][cell] with the cell fastest: whatever row each thread reads, the 32
// (or 64) lanes of a warp touch consecutive words, so there are no bank conflicts and no
// padding is needed.
//
// Order statistics come from the sorted groups without sorting the window. Each percentile
// keeps its value at the previous target day and, per group, how many samples lie at or below
// it; those positions move the few rows the value moves (days are close), which gives the
// start's rank, and a walk over the groups' heads goes the remaining ranks, up or down. When
// there is no previous value, or an end of the window is nearer, the walk starts at that end.
// Each walk step takes the best head among the groups by a pairwise tournament in registers.
//
// Exactness: keys order values exactly as the CPU engine's total order; sums follow the
// window plan's canonical order (per group over years, then over groups in offset order) with
// non-fused IEEE operations; the percentile interpolation is the CPU engine's lerp. Results are
// bitwise equal to the CPU engine on the same pool.
#include "sstclim_port.h"

// Kernel arguments; mirrored by `KernelParams` in src/engine/gpu/mod.rs (same order, same
// sizes: pointers and 64-bit fields first, then 32-bit ones).
struct ClimParams {
    const void* pool;          // [row][cell]: device pool rows, `pool_stride` elements apart
    double* out_values;        // [stat][target][cell]
    sc_u32* out_counts;        // [target][cell]
    const int* load_start;     // per target of the batch: first entry in `loads` (+1 at the end)
    const int* loads;          // (group, ring slot) pairs, in the order they are needed
    const int* target_lists;   // per target: MAXL ring slots, groups in offset order
    const int* target_nl;      // per target: number of groups
    const int* group_off;      // per group: first entry in `group_rows` (+1 at the end)
    const int* group_rows;     // pool row of each sample of each group, in year order
    const int* group_first;    // per group: its first row when its rows are consecutive, else -1
    const int* pos_lo;         // [n][percentile]: 1-based rank of the lower order statistic
    const double* pos_frac;    // [n][percentile]: interpolation weight towards rank + 1
    void* ring_global;         // null: the ring's keys live in shared memory; else each block's
                               // keys lie here, one block's worth after another
    const double* lut;         // int16 pools: decoded value of every integer (index + 32768)
    sc_i64 pool_stride;        // elements between pool rows
    sc_i64 out_cell_stride;    // cells per output row
    int n_cells;               // cells of this launch
    int out_cell0;             // first output cell of this launch
    int n_batch;               // targets of this batch
    int out_target0;           // index of the batch's first target in the output
    int out_targets;           // targets per output statistic
    int n_pct;                 // percentiles
    int max_n;                 // largest n in the position tables
    int min_samples;           // fewer valid samples than this: no values
    int rows;                  // rows per ring slot: largest group + 2 sentinels
    int ring;                  // ring slots
    int use_hints;             // 1: start searches from the previous day's value
    int pad_;
};

#define SC_MAX_PCT 8
#define SC_SORT_MAX 32

// Order-preserving keys: a < b as floats (total order, -0 < +0) iff key(a) < key(b).
template <typename T>
struct Keys;

template <>
struct Keys<float> {
    typedef sc_u32 K;
    static const K MIN = 0u;
    static const K MAX = 0xffffffffu;
    static SC_DEVICE bool finite(float v) { return (sc_float_bits(v) & 0x7f800000u) != 0x7f800000u; }
    static SC_DEVICE K key(float v) {
        sc_u32 b = sc_float_bits(v);
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
    static SC_DEVICE double value(K k) { return (double)sc_bits_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k); }
};

template <>
struct Keys<double> {
    typedef sc_u64 K;
    static const K MIN = 0ull;
    static const K MAX = 0xffffffffffffffffull;
    static SC_DEVICE bool finite(double v) {
        return (sc_double_bits(v) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
    }
    static SC_DEVICE K key(double v) {
        sc_u64 b = sc_double_bits(v);
        return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
    }
    static SC_DEVICE double value(K k) {
        return sc_bits_double((k & 0x8000000000000000ull) ? (k & 0x7fffffffffffffffull) : ~k);
    }
};

// Pool storage types and what the kernel computes with: float and double as they are; int16
// pools hold the file's integers, decoded through the pool's table into double.
template <typename S>
struct Compute {
    typedef S type;
    static SC_DEVICE S load(S v, const double*) { return v; }
};

template <>
struct Compute<short> {
    typedef double type;
    static SC_DEVICE double load(short v, const double* lut) { return __ldg(lut + (int)v + 32768); }
};

// The CPU engine's interpolation (src/percentile.rs `lerp`), exact at both ends.
SC_DEVICE double sc_lerp(double lo, double hi, double frac) {
    double diff = sc_sub(hi, lo);
    return frac < 0.5 ? sc_add(lo, sc_mul(diff, frac)) : sc_sub(hi, sc_mul(diff, sc_sub(1.0, frac)));
}

// Ascending bitonic sort of 32 keys held in registers (every index is known at compile time,
// so the keys never leave registers; Batcher's odd-even network has fewer comparators but its
// loop bounds defeat full unrolling).
template <typename K>
SC_DEVICE void sort32(K (&x)[SC_SORT_MAX]) {
#pragma unroll
    for (int k = 2; k <= SC_SORT_MAX; k <<= 1) {
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1) {
#pragma unroll
            for (int i = 0; i < SC_SORT_MAX; ++i) {
                int l = i ^ j;
                if (l > i) {
                    K a = x[i], b = x[l];
                    K lo = a < b ? a : b, hi = a < b ? b : a;
                    bool up = (i & k) == 0;
                    x[i] = up ? lo : hi;
                    x[l] = up ? hi : lo;
                }
            }
        }
    }
}

// Per-thread view of the ring: slot s, row r of this thread's cell.
template <typename K>
struct Ring {
    K* keys;              // [slot][row][cell]
    double* sums;         // [slot][cell]
    int* counts;          // [slot][cell]
    K* hints;             // [percentile][cell], this thread's cell: each percentile's last value
    unsigned char* pos;   // [percentile][slot][cell], this thread's cell: see select_ranks
    int rows, bc, tid, slots, n_pct;
    SC_DEVICE int at(int slot, int row) const { return (slot * rows + row) * bc + tid; }
};

// Issue the loads of group `g` (up to 32 years) all at once, none behind a branch, so their
// latencies overlap. A group whose rows are consecutive (every year present: the usual case)
// steps through its column by the stride; any other reads each row from the group's table,
// and rows past its end repeat its last row.
template <typename S>
SC_DEVICE int fetch_group(const ClimParams& p, int g, int cell, typename Compute<S>::type (&v)[SC_SORT_MAX]) {
    typedef typename Compute<S>::type T;
    // this cell's column of the pool; a row's offset is a 32-bit row times a 32-bit stride (the
    // host keeps the stride below 2^31), one wide multiply instead of 64-bit arithmetic per row
    const S* __restrict__ col = (const S*)p.pool + cell;
    const int stride = (int)p.pool_stride;
    const int off = __ldg(p.group_off + g);
    const int len = __ldg(p.group_off + g + 1) - off;
    const int first = __ldg(p.group_first + g);
    const double* lut = p.lut;
    if (first >= 0) {
        const S* __restrict__ q = col + (sc_i64)first * stride;
#pragma unroll
        for (int y = 0; y < SC_SORT_MAX; ++y) v[y] = y < len ? Compute<S>::load(q[(sc_i64)y * stride], lut) : (T)0;
    } else {
        const int last = len > 0 ? len - 1 : 0;
        const int* __restrict__ rows = p.group_rows + off;
#pragma unroll
        for (int y = 0; y < SC_SORT_MAX; ++y) {
            const int row = __ldg(rows + (y < last ? y : last));
            v[y] = len > 0 ? Compute<S>::load(col[(sc_i64)row * stride], lut) : (T)0;
        }
    }
    return len;
}

// Sort a fetched group (at most 32 samples) and stage it in ring slot `slot`.
template <typename T>
SC_DEVICE void store_group(const Ring<typename Keys<T>::K>& ring, const T (&v)[SC_SORT_MAX], int len, int slot) {
    typedef typename Keys<T>::K K;
    K x[SC_SORT_MAX];
    double sum = 0.0;
    int n = 0;
#pragma unroll
    for (int y = 0; y < SC_SORT_MAX; ++y) {
        bool ok = y < len && Keys<T>::finite(v[y]);
        x[y] = ok ? Keys<T>::key(v[y]) : Keys<T>::MAX;
        sum = ok ? sc_add(sum, (double)v[y]) : sum;
        n += ok ? 1 : 0;
    }
    sort32(x);
    K* col = ring.keys + ring.at(slot, 0);
    const int step = ring.bc;
    col[0] = Keys<T>::MIN;
#pragma unroll
    for (int y = 0; y < SC_SORT_MAX; ++y) {
        if (y <= len) col[(y + 1) * step] = x[y];  // row len + 1 gets a MAX sentinel
    }
    if (len == SC_SORT_MAX) col[(SC_SORT_MAX + 1) * step] = Keys<T>::MAX;
    ring.sums[slot * ring.bc + ring.tid] = sum;
    ring.counts[slot * ring.bc + ring.tid] = n;
    // each percentile's starting position in the new group: samples at or below its hint
    for (int i = 0; i < ring.n_pct; ++i) {
        const K hint = ring.hints[i * ring.bc];
        int c = 0;
#pragma unroll
        for (int y = 0; y < SC_SORT_MAX; ++y) c += x[y] <= hint ? 1 : 0;
        ring.pos[(i * ring.slots + slot) * ring.bc] = (unsigned char)(hint == Keys<T>::MIN ? 0 : c);
    }
}

// A group of more than 32 years: load and insertion-sort it in place in its ring slot.
template <typename S>
SC_DEVICE void stage_long_group(const ClimParams& p, const Ring<typename Keys<typename Compute<S>::type>::K>& ring,
                                int g, int slot, int cell) {
    typedef typename Compute<S>::type T;
    typedef typename Keys<T>::K K;
    const S* __restrict__ pool = (const S*)p.pool;
    const int off = p.group_off[g];
    const int len = p.group_off[g + 1] - off;
    K* col = ring.keys + ring.at(slot, 0);
    const int step = ring.bc;
    col[0] = Keys<T>::MIN;
    double sum = 0.0;
    int n = 0;
    for (int y = 0; y < len; ++y) {
        T v = Compute<S>::load(pool[(sc_i64)p.group_rows[off + y] * p.pool_stride + cell], p.lut);
        if (!Keys<T>::finite(v)) continue;
        K k = Keys<T>::key(v);
        sum = sc_add(sum, (double)v);
        int r = n;
        while (r > 0 && col[r * step] > k) {
            col[(r + 1) * step] = col[r * step];
            --r;
        }
        col[(r + 1) * step] = k;
        ++n;
    }
    for (int r = n + 1; r <= len + 1; ++r) col[r * step] = Keys<T>::MAX;
    ring.sums[slot * ring.bc + ring.tid] = sum;
    ring.counts[slot * ring.bc + ring.tid] = n;
    for (int i = 0; i < ring.n_pct; ++i) ring.pos[(i * ring.slots + slot) * ring.bc] = 0;
}

// Walk the merged order of the target's groups, taking the largest head each step (`DOWN`)
// or the smallest (`UP`), `steps` times. `h[j]` is group j's current head, at row `row[j]`;
// heads of absent groups are the sentinel that is never taken. Returns the last value taken
// and, through `before`, the one taken before it; `row` ends at the untaken heads.
template <typename K, int MAXL, bool DOWN>
SC_DEVICE K walk(const K* keys, const int (&base)[MAXL], int (&row)[MAXL], K (&h)[MAXL], int step, int steps,
                 K& before) {
    const K none = DOWN ? (K)0 : (K)~(K)0;
    K last = none;
    before = none;
    for (int s = 0; s < steps; ++s) {
        // best head by a pairwise tournament (depth log2(MAXL), not MAXL)
        K v[MAXL];
        int ix[MAXL];
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            v[j] = h[j];
            ix[j] = j;
        }
#pragma unroll
        for (int width = MAXL; width > 1; width = (width + 1) / 2) {
#pragma unroll
            for (int j = 0; j < width / 2; ++j) {
                bool better = DOWN ? (v[2 * j + 1] > v[2 * j]) : (v[2 * j + 1] < v[2 * j]);
                v[j] = better ? v[2 * j + 1] : v[2 * j];
                ix[j] = better ? ix[2 * j + 1] : ix[2 * j];
            }
            if (width & 1) {
                v[width / 2] = v[width - 1];
                ix[width / 2] = ix[width - 1];
            }
        }
        const int bj = ix[0];
        before = last;
        last = v[0];
        int addr = 0;
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            if (j == bj) {
                row[j] += DOWN ? -1 : 1;
                addr = base[j] + row[j] * step;
            }
        }
        const K next = keys[addr];
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            if (j == bj) h[j] = next;
        }
    }
    return last;
}

// The values at 1-based ranks `r` and `r + 1` (when `need_next`) among the `n` valid samples
// of the target's groups (ring slots `slot[j]`, `cnt[j]` valid samples each).
//
// With a hint (this percentile's value at the previous target day), each group's count of
// samples at or below it is found by moving that group's stored position (`pos`, one byte per
// slot, left by the previous target or set when the group was staged) the few rows the hint
// moved; the walk then starts there. Without one, or when an end is nearer, it starts at the
// nearer end. Positions are left for the next target either way.
template <typename K, int MAXL>
SC_DEVICE void select_ranks(const K* keys, const int (&base)[MAXL], const int (&cnt)[MAXL], const int (&slot)[MAXL],
                            int nl, int step, int n, int r, bool need_next, bool have_hint, K hint,
                            unsigned char* pos, int pos_step, K& x_r, K& x_next) {
    const K kmin = (K)0, kmax = (K)~(K)0;
    int le[MAXL];     // samples of group j at or below the start
    K at[MAXL];       // group j's largest sample at or below the start (kmin: none)
    K above[MAXL];    // group j's smallest sample above the start (kmax: none)
    int below = 0;
    const int full_down = n - r + 1, full_up = r;
    bool use_hint = false;
    if (have_hint) {
        // every group's stored position and the keys around it, all loads issued before any
        // is waited for; then each group's position moves the few rows the hint moved
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            le[j] = 0;
            at[j] = kmin;
            above[j] = kmax;
            if (j < nl) {
                int q = pos[slot[j] * pos_step];
                q = q < cnt[j] ? q : cnt[j];
                le[j] = q;
                at[j] = keys[base[j] + q * step];
                above[j] = keys[base[j] + (q + 1) * step];
            }
        }
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            if (j < nl) {
                int q = le[j];
                K a = at[j], b = above[j];
                while (b <= hint) {  // row cnt + 1 holds kmax
                    ++q;
                    a = b;
                    b = keys[base[j] + (q + 1) * step];
                }
                while (a > hint) {  // row 0 holds kmin
                    --q;
                    b = a;
                    a = keys[base[j] + q * step];
                }
                le[j] = q;
                at[j] = a;
                above[j] = b;
                below += q;
            }
        }
        const int cost = r <= below ? below - r + 1 : r - below;
        use_hint = cost < (full_down < full_up ? full_down : full_up);
    }
    if (!use_hint) {
        const bool from_top = full_down < full_up;
        below = from_top ? n : 0;
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            le[j] = from_top && j < nl ? cnt[j] : 0;
            at[j] = j < nl ? keys[base[j] + le[j] * step] : kmin;
            above[j] = j < nl ? keys[base[j] + (le[j] + 1) * step] : kmax;
        }
    }
    int row[MAXL], fin[MAXL];
    K h[MAXL];
    K before;
    if (r <= below) {
        // x(r) is the (below - r + 1)-th largest at or below the start
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            row[j] = le[j];
            h[j] = at[j];
        }
        const int steps = below - r + 1;
        x_r = walk<K, MAXL, true>(keys, base, row, h, step, steps, before);
#pragma unroll
        for (int j = 0; j < MAXL; ++j) fin[j] = row[j];
        if (need_next) {
            if (steps >= 2) {
                x_next = before;
            } else {
#pragma unroll
                for (int j = 0; j < MAXL; ++j) {
                    row[j] = le[j] + 1;
                    h[j] = above[j];
                }
                x_next = walk<K, MAXL, false>(keys, base, row, h, step, 1, before);
            }
        }
    } else {
        // x(r) is the (r - below)-th smallest above the start
#pragma unroll
        for (int j = 0; j < MAXL; ++j) {
            row[j] = le[j] + 1;
            h[j] = above[j];
        }
        const int steps = r - below + (need_next ? 1 : 0);
        const K last = walk<K, MAXL, false>(keys, base, row, h, step, steps, before);
#pragma unroll
        for (int j = 0; j < MAXL; ++j) fin[j] = row[j] - 1;
        if (need_next) {
            x_r = before;
            x_next = last;
        } else {
            x_r = last;
        }
    }
    // positions for the next target: about where x(r) lies in each group
#pragma unroll
    for (int j = 0; j < MAXL; ++j) {
        if (j < nl) pos[slot[j] * pos_step] = (unsigned char)(fin[j] < 0 ? 0 : (fin[j] > 255 ? 255 : fin[j]));
    }
}

template <typename S, int MAXL>
SC_DEVICE void climatology(const ClimParams& p) {
    typedef typename Compute<S>::type T;
    typedef typename Keys<T>::K K;
    extern __shared__ double sc_shared[];
    const int bc = blockDim.x;
    const int tid = threadIdx.x;
    // The block's warps meet after every load (a barrier at the end of each pass below): warps
    // left to drift apart run different stretches of this long kernel at once, and stall on
    // instruction fetch (29.8 ms without the barrier, 27.4 ms with it for the reference job on
    // an H200). So every thread stays to the end: threads past the last cell compute the last
    // cell again and write nothing.
    const bool active = blockIdx.x * bc + tid < p.n_cells;
    const int cell = active ? blockIdx.x * bc + tid : p.n_cells - 1;

    // Shared memory: sums, then (unless they live in device memory) the keys, then counts,
    // hints and positions. With `ring_global`, each block's keys lie in device memory.
    Ring<K> ring;
    ring.sums = sc_shared;
    int* after_keys;
    if (p.ring_global) {
        ring.keys = (K*)p.ring_global + (sc_i64)blockIdx.x * p.ring * p.rows * bc;
        after_keys = (int*)(ring.sums + p.ring * bc);
    } else {
        ring.keys = (K*)(ring.sums + p.ring * bc);
        after_keys = (int*)(ring.keys + (sc_i64)p.ring * p.rows * bc);
    }
    ring.counts = after_keys;
    ring.rows = p.rows;
    ring.bc = bc;
    ring.tid = tid;
    ring.slots = p.ring;
    ring.n_pct = p.n_pct;
    // each percentile's value at the previous target day (MIN: none yet), after the counts;
    // then the positions
    K* hints = (K*)(ring.counts + p.ring * bc) + tid;
    ring.hints = hints;
    ring.pos = (unsigned char*)((K*)(ring.counts + p.ring * bc) + p.n_pct * bc) + tid;
    for (int i = 0; i < p.n_pct; ++i) hints[i * bc] = Keys<T>::MIN;
    const double nan = sc_bits_double(0x7ff8000000000000ull);
    const int n_stats = 1 + p.n_pct;
    const sc_i64 out_cell = p.out_cell0 + cell;

    // One pass over the batch's loads, in order: store load i's group (fetched the iteration
    // before), issue the loads of load i + 1's group, then search every target whose groups
    // are all staged. So a target's new group is in flight while the previous target is
    // searched, and the fetch, the store and the search each appear once in the code (the
    // kernel's straight-line code outgrows the instruction caches otherwise).
    T next[SC_SORT_MAX];
    int next_len = 0;
    const int l0 = p.load_start[0], l_end = p.load_start[p.n_batch];
    int t = 0;
    for (int li = l0 - 1; li < l_end; ++li) {
        if (li >= l0) {
            const int g = __ldg(p.loads + 2 * li), slot = __ldg(p.loads + 2 * li + 1);
            if (p.group_off[g + 1] - p.group_off[g] > SC_SORT_MAX) {
                stage_long_group<S>(p, ring, g, slot, cell);
            } else {
                store_group<T>(ring, next, next_len, slot);
            }
        }
        if (li + 1 < l_end) {
            const int g = __ldg(p.loads + 2 * (li + 1));
            if (p.group_off[g + 1] - p.group_off[g] <= SC_SORT_MAX) next_len = fetch_group<S>(p, g, cell, next);
        }
        for (; t < p.n_batch && p.load_start[t + 1] <= li + 1; ++t) {
            const int nl = p.target_nl[t];
            int base[MAXL], cnt[MAXL], slots[MAXL];
            int n = 0;
            double total = 0.0;
#pragma unroll
            for (int j = 0; j < MAXL; ++j) {
                base[j] = 0;
                cnt[j] = 0;
                slots[j] = 0;
                if (j < nl) {
                    const int slot = __ldg(p.target_lists + t * MAXL + j);
                    slots[j] = slot;
                    base[j] = ring.at(slot, 0);
                    cnt[j] = ring.counts[slot * bc + tid];
                    n += cnt[j];
                    total = sc_add(total, ring.sums[slot * bc + tid]);
                }
            }
            const int tg = p.out_target0 + t;
            if (active) p.out_counts[(sc_i64)tg * p.out_cell_stride + out_cell] = (sc_u32)n;
            double* out = p.out_values + (sc_i64)tg * p.out_cell_stride + out_cell;
            const sc_i64 stat_stride = (sc_i64)p.out_targets * p.out_cell_stride;
            if (n == 0 || n < p.min_samples) {
                for (int s = 0; s < n_stats && active; ++s) out[s * stat_stride] = nan;
                continue;
            }
            if (active) out[0] = sc_div(total, (double)n);
            for (int i = 0; i < p.n_pct && i < SC_MAX_PCT; ++i) {
                int lo = p.pos_lo[n * p.n_pct + i];
                double frac = p.pos_frac[n * p.n_pct + i];
                K x_lo, x_hi = 0;
                const K hint = hints[i * bc];
                select_ranks<K, MAXL>(ring.keys, base, cnt, slots, nl, bc, n, lo, frac != 0.0,
                                      p.use_hints && hint != Keys<T>::MIN, hint, ring.pos + i * p.ring * bc, bc, x_lo,
                                      x_hi);
                hints[i * bc] = x_lo;
                double v_lo = Keys<T>::value(x_lo);
                if (active) out[(1 + i) * stat_stride] = frac == 0.0 ? v_lo : sc_lerp(v_lo, Keys<T>::value(x_hi), frac);
            }
        }
        __syncthreads();
    }
}

// Blocks of 256 threads a multiprocessor must hold at least: caps registers per thread
// (nvcc and NVRTC ignore --maxrregcount for kernels with launch bounds).
#ifndef SC_MIN_BLOCKS
#define SC_MIN_BLOCKS 1
#endif

// The instantiations the engines load by name: sample type x largest window (groups per target).
#define SC_KERNEL(NAME, T, MAXL)                                                                 \
    extern "C" __global__ void __launch_bounds__(256, SC_MIN_BLOCKS) NAME(const ClimParams p) { \
        climatology<T, MAXL>(p);                                                                 \
    }

// A run-time compiler builds only the one it needs (-DSC_SELECT -DSC_WANT_<name>); hipcc
// builds all nine into the code object.
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f32_l11)
SC_KERNEL(sstclim_clim_f32_l11, float, 11)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f64_l11)
SC_KERNEL(sstclim_clim_f64_l11, double, 11)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16_l11)
SC_KERNEL(sstclim_clim_i16_l11, short, 11)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f32_l12)
SC_KERNEL(sstclim_clim_f32_l12, float, 12)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f32_l32)
SC_KERNEL(sstclim_clim_f32_l32, float, 32)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f64_l12)
SC_KERNEL(sstclim_clim_f64_l12, double, 12)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f64_l32)
SC_KERNEL(sstclim_clim_f64_l32, double, 32)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16_l12)
SC_KERNEL(sstclim_clim_i16_l12, short, 12)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16_l32)
SC_KERNEL(sstclim_clim_i16_l32, short, 32)
#endif
