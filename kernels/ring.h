// ring.h: how a group reaches the ring. A group's samples are fetched from the pool in one go
// (`fetch_group`), turned into keys, sorted in registers (`sort32`) and stored in a ring slot
// with the percentiles' starting positions (`stage_group`); a group of more than 32 years is
// sorted in place in its slot instead (`stage_long_group`). `Ring` is one thread's view.
//
// Shared memory holds, per ring slot and per cell, the group's sorted keys between two
// sentinels (row 0: smallest key, rows after the last valid sample: largest key), its valid
// count and its float64 sum. Where LDS is too small to keep enough cells resident, the keys
// move to a per-block area of device memory with the same layout and the rest stays in LDS.
// The layout is [slot][row][cell] with the cell fastest: whatever row each thread reads, the 32
// (or 64) lanes of a warp touch consecutive words, so there are no bank conflicts and no
// padding is needed. (Each thread's rows contiguous in device memory instead, [cell][slot][row],
// so that a search's successive reads share a sector, measured 32.0 ms against 12.5 ms for the
// reference job on an H200: then no two lanes of a load share a sector.)
#pragma once

#include "keys.h"
#include "params.h"
#include "sort_network.inc"
#include "sstclim_port.h"

// Ascending sort of 32 keys held in registers by Batcher's odd-even merge network (every index
// is a compile-time constant, so the keys never leave registers): 191 compare-exchanges against
// the bitonic network's 240 (21.0 ms against 21.6 ms for the reference job on the H200).
template <typename K>
SC_DEVICE void sort32(K (&x)[SC_SORT_MAX]) {
#define SC_CX(a, b)                              \
    {                                            \
        const K lo_ = x[a] < x[b] ? x[a] : x[b]; \
        const K hi_ = x[a] < x[b] ? x[b] : x[a]; \
        x[a] = lo_;                              \
        x[b] = hi_;                              \
    }
    SC_SORT32_NETWORK(SC_CX)
#undef SC_CX
}

// Per-thread view of the ring: slot s, row r of this thread's cell.
template <typename K>
struct Ring {
    K* keys;              // [slot][row][cell]
    K* kcol;              // this thread's cell in `keys`, see `sc_global_column`
    double* sums;         // [slot][cell]
    int* counts;          // [slot][cell]
    K* hints;             // [percentile][cell], this thread's cell: each percentile's last value
    unsigned char* pos;   // [percentile][slot][cell], this thread's cell: see select_ranks (walk.h)
    int rows, bc, tid, slots, n_pct;
    // offset of slot `slot`, row `row` from this thread's column `kcol`
    SC_DEVICE int slot_row(int slot, int row) const { return (slot * rows + row) * bc; }
};

#define SC_POOL_LOAD(ptr) sc_load_stream(ptr)

// Issue the loads of group `g` (up to 32 years) all at once, none behind a branch, so their
// latencies overlap. A group whose rows are consecutive (every year present: the usual case)
// steps through its column by the stride; any other reads each row from the group's table,
// and rows past its end repeat its last row. Where a pool row's byte stride fits 32 bits (all
// but pools of over 2^31 bytes a row), each address is one wide multiply-add of a 32-bit row
// number and that stride (17.0 ms against 17.9 ms with 64-bit arithmetic for the reference job
// on the H200). The pool is read once, so its loads ask the caches to evict them first
// (`sc_load_stream`), keeping room for the ring (18.0 ms against 18.7 ms).
template <typename S>
SC_DEVICE int fetch_group(const ClimParams& p, int g, int cell, typename Compute<S>::type (&v)[SC_SORT_MAX]) {
    typedef typename Compute<S>::type T;
    typedef typename Compute<S>::stored P;
    const P* __restrict__ col = (const P*)p.pool + cell;
    const int off = __ldg(p.group_off + g);
    const int stored_len = __ldg(p.group_off + g + 1) - off;
    const int first = __ldg(p.group_first + g);
#if SC_GLEN
    if (stored_len != SC_GLEN || first < 0) sc_trap();
    const int len = SC_GLEN;
#else
    const int len = stored_len;
#endif
    const double* lut = p.lut;
    const sc_i64 row_bytes = SC_POOL_STRIDE(p) * (sc_i64)sizeof(P);
#pragma unroll
    for (int y = 0; y < SC_SORT_MAX; ++y) v[y] = Compute<S>::zero();
    // every branch below is uniform: the same group and pool for every thread
    if (len == 0) return 0;
    const int last = len - 1;
    const int* __restrict__ rows = p.group_rows + off;
    if (row_bytes < 0x80000000ll) {
        const int rb = (int)row_bytes;
        if (SC_GLEN || first >= 0) {
            const char* __restrict__ q = (const char*)col + (sc_i64)first * row_bytes;
#pragma unroll
            for (int y = 0; y < SC_SORT_MAX; ++y) {
                if (y < len) v[y] = Compute<S>::load(SC_POOL_LOAD((const P*)(q + (sc_i64)y * rb)), lut);
            }
        } else {
            const char* __restrict__ c = (const char*)col;
#pragma unroll
            for (int y = 0; y < SC_SORT_MAX; ++y) {
                const int row = __ldg(rows + (y < last ? y : last));
                v[y] = Compute<S>::load(SC_POOL_LOAD((const P*)(c + (sc_i64)row * rb)), lut);
            }
        }
    } else {
        const sc_i64 stride = SC_POOL_STRIDE(p);
#pragma unroll
        for (int y = 0; y < SC_SORT_MAX; ++y) {
            const sc_i64 row = first >= 0 ? (sc_i64)first + (y < last ? y : last) : __ldg(rows + (y < last ? y : last));
            v[y] = Compute<S>::load(SC_POOL_LOAD(col + row * stride), lut);
        }
    }
    return len;
}

// Stage a group without valid samples in ring slot `slot`: its two sentinels, nothing to sort.
template <typename K>
SC_DEVICE void store_empty_group(const Ring<K>& ring, int slot) {
    K* col = ring.kcol + ring.slot_row(slot, 0);
    if (SC_COLD_ROW(0)) {
        sc_store_stream(col, (K)0);
    } else {
        col[0] = (K)0;
    }
    if (SC_COLD_ROW(1)) {
        sc_store_stream(col + ring.bc, (K)~(K)0);
    } else {
        col[ring.bc] = (K)~(K)0;
    }
    ring.sums[slot * ring.bc + ring.tid] = 0.0;
    ring.counts[slot * ring.bc + ring.tid] = 0;
    for (int i = 0; i < ring.n_pct; ++i) ring.pos[(i * ring.slots + slot) * ring.bc] = 0;
}

// With every group's length compiled in, rows 0 (MIN) and GLEN + 1 (MAX) hold the same key in
// every group, so each slot's are written once when the kernel starts and staging skips them
// (2 of 33 rows: 11.67 ms against 11.84 ms for the reference job on an H200, the mean alone
// 7.02 against 7.20 ms; bench-results/runs/2026-12-01-h200-sentinels-once). An empty group still
// stores its row 1 (MAX).
#define SC_SENTINELS_ONCE (SC_GLEN != 0)

// A sorted group's rows, `step` apart from `col`: the MIN sentinel, its keys and a MAX sentinel
// after its valid ones (its invalid samples' keys are MAX).
template <typename K>
SC_DEVICE void store_rows(K* col, int step, const K (&x)[SC_SORT_MAX], int len) {
    if (!SC_SENTINELS_ONCE) {
        if (SC_COLD_ROW(0)) {
            sc_store_stream(col, (K)0);
        } else {
            col[0] = (K)0;
        }
    }
#pragma unroll
    for (int y = 0; y < SC_SORT_MAX; ++y) {
        if (SC_SENTINELS_ONCE && y == SC_GLEN) continue;  // row GLEN + 1: written at the start
        if (y <= len) {  // row len + 1 gets a MAX sentinel
            if (SC_COLD_ROW(y + 1)) {
                sc_store_stream(col + (y + 1) * step, x[y]);
            } else {
                col[(y + 1) * step] = x[y];
            }
        }
    }
    if (len == SC_SORT_MAX) col[(SC_SORT_MAX + 1) * step] = (K)~(K)0;
}

// Sort a group's keys `x` (invalid samples' keys MAX; `n` valid ones summing to `sum`) and
// stage them in ring slot `slot`, with each percentile's starting position.
template <typename K>
SC_DEVICE void stage_sorted(const Ring<K>& ring, K (&x)[SC_SORT_MAX], double sum, int n, int len, int slot) {
    sort32(x);
    K* col = ring.kcol + ring.slot_row(slot, 0);
    store_rows(col, ring.bc, x, len);
    ring.sums[slot * ring.bc + ring.tid] = sum;
    ring.counts[slot * ring.bc + ring.tid] = n;
    // each percentile's starting position in the new group: samples at or below its hint
    for (int i = 0; i < ring.n_pct; ++i) {
        const K hint = ring.hints[i * ring.bc];
        int c = 0;
        // keys past a group of known length are MAX, never at or below a hint (a binary search
        // over the sorted keys, 26 selections and 6 comparisons, measured no faster: 11.79
        // against 11.75 ms for the reference job on an H200)
#pragma unroll
        for (int y = 0; y < (SC_GLEN ? SC_GLEN : SC_SORT_MAX); ++y) c += x[y] <= hint ? 1 : 0;
        ring.pos[(i * ring.slots + slot) * ring.bc] = (unsigned char)(hint == (K)0 ? 0 : c);  // 0: MIN, no hint
    }
}

// Sort a fetched group (at most 32 samples) and stage it in ring slot `slot`.
//
// Where no lane of the wave has a valid sample in its group (land, or a day missing over a
// whole stretch of cells), the wave stores only the sentinels (`store_empty_group`); each lane
// learns whether it has one by ANDing its samples' exponent bits (12.80 ms against 13.65 ms
// for the reference job on an H200, whose grid is 30 % land).
template <typename T>
SC_DEVICE void store_group(const Ring<typename Keys<T>::K>& ring, const T (&v)[SC_SORT_MAX], int len, int slot) {
    typedef typename Keys<T>::K K;
    {
        K exps = Keys<T>::EXP;
#pragma unroll
        for (int y = 0; y < SC_SORT_MAX; ++y) exps &= y < len ? Keys<T>::exp_bits(v[y]) : Keys<T>::EXP;
        if (sc_all(exps == Keys<T>::EXP)) {
            store_empty_group(ring, slot);
            return;
        }
    }
    K x[SC_SORT_MAX];
    double sum = 0.0;
    int n = 0;
#pragma unroll
    for (int y = 0; y < SC_SORT_MAX; ++y) {
        const K k = Keys<T>::key(v[y]);
        const bool ok = y < len && Keys<T>::finite_key(k);
        x[y] = ok ? k : Keys<T>::MAX;
        // (adding +0.0 for an invalid sample instead gives the same sums with one selection
        // fewer, but measured 13.02 ms against 12.36 ms for the reference job on an H200)
        sum = ok ? sc_add(sum, (double)v[y]) : sum;
        n += ok ? 1 : 0;
    }
    stage_sorted(ring, x, sum, n, len, slot);
}

// Ordered int16 pools (`sc_i16key`): a sample's validity and value come from the pool's table,
// its key from its integer; then as any other group.
template <typename T>
SC_DEVICE void stage_group(const Ring<typename Keys<T>::K>& ring, const T (&v)[SC_SORT_MAX], int len, int slot,
                           const double*) {
    store_group<T>(ring, v, len, slot);
}
template <>
SC_DEVICE void stage_group<sc_i16key>(const Ring<sc_u32>& ring, const sc_i16key (&v)[SC_SORT_MAX], int len, int slot,
                                      const double* lut) {
    sc_u32 x[SC_SORT_MAX];
    double sum = 0.0;
    int n = 0;
#pragma unroll
    for (int y = 0; y < SC_SORT_MAX; ++y) {
        const double d = y < len ? __ldg(lut + (v[y].k - 1u)) : 0.0;
        const bool ok = y < len && Keys<double>::finite(d);
        x[y] = ok ? v[y].k : Keys<sc_i16key>::MAX;
        sum = ok ? sc_add(sum, d) : sum;
        n += ok ? 1 : 0;
    }
    if (sc_all(n == 0)) {
        store_empty_group(ring, slot);
        return;
    }
    stage_sorted(ring, x, sum, n, len, slot);
}

// A long group's sample at pool element `at`: its key and value (false: missing). Ordered int16
// pools key the integer and take the value from the table.
template <typename S>
SC_DEVICE bool long_sample(const ClimParams& p, sc_i64 at, typename Keys<typename Compute<S>::type>::K& k,
                           double& v) {
    typedef typename Compute<S>::type T;
    const T x = Compute<S>::load(((const typename Compute<S>::stored*)p.pool)[at], p.lut);
    if (!Keys<T>::finite(x)) return false;
    k = Keys<T>::key(x);
    v = (double)x;
    return true;
}
template <>
SC_DEVICE bool long_sample<sc_i16_ordered>(const ClimParams& p, sc_i64 at, sc_u32& k, double& v) {
    k = Compute<sc_i16_ordered>::load(((const short*)p.pool)[at], p.lut).k;
    v = __ldg(p.lut + (k - 1u));
    return Keys<double>::finite(v);
}

// A group of more than 32 years: load and insertion-sort it in place in its ring slot.
template <typename S>
SC_DEVICE void stage_long_group(const ClimParams& p, const Ring<typename Keys<typename Compute<S>::type>::K>& ring,
                                int g, int slot, int cell) {
    typedef typename Keys<typename Compute<S>::type>::K K;
    const int off = p.group_off[g];
    const int len = p.group_off[g + 1] - off;
    K* col = ring.kcol + ring.slot_row(slot, 0);
    const int step = ring.bc;
    col[0] = (K)0;  // MIN
    double sum = 0.0;
    int n = 0;
    for (int y = 0; y < len; ++y) {
        K k;
        double v;
        if (!long_sample<S>(p, (sc_i64)p.group_rows[off + y] * p.pool_stride + cell, k, v)) continue;
        sum = sc_add(sum, v);
        int r = n;
        while (r > 0 && col[r * step] > k) {
            col[(r + 1) * step] = col[r * step];
            --r;
        }
        col[(r + 1) * step] = k;
        ++n;
    }
    for (int r = n + 1; r <= len + 1; ++r) col[r * step] = (K)~(K)0;  // MAX
    ring.sums[slot * ring.bc + ring.tid] = sum;
    ring.counts[slot * ring.bc + ring.tid] = n;
    for (int i = 0; i < ring.n_pct; ++i) ring.pos[(i * ring.slots + slot) * ring.bc] = 0;
}
