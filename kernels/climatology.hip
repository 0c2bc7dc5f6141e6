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
// padding is needed. (Each thread's rows contiguous in device memory instead, [cell][slot][row],
// so that a search's successive reads share a sector, measured 32.0 ms against 12.5 ms for the
// reference job on an H200: then no two lanes of a load share a sector.)
//
// Order statistics come from the sorted groups without sorting the window. Each percentile
// keeps its value at the previous target day and, per group, how many samples lie at or below
// it; those positions move the few rows the value moves (days are close), which gives the
// start's rank, and a walk over the groups' heads goes the remaining ranks, up or down. When
// there is no previous value, or an end of the window is nearer, the walk starts at that end.
// The walk keeps the groups' heads sorted in registers: each step takes the best and inserts
// the next key of its group among the others.
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

// Launch constants. The CUDA backend compiles each kernel for the launches it serves and passes
// what it knows of them as -DSC_K_<NAME>=<value> (src/engine/gpu/spec.rs): block size, ring
// geometry, percentile count, pool stride, and where every group has the same number of
// consecutive pool rows and every target the same number of groups, those too. Strides, loop
// bounds and the padding of short groups then fold into the code. Without them (the HIP build,
// which compiles every kernel ahead of time, or SSTCLIM_CUDA_SPECIALIZE=0) the kernel reads the
// same values from its arguments. A kernel launched with other values than it was compiled for
// stops with a trap (`check_launch`, and per group and target below) instead of computing.
#ifdef SC_K_BC
#define SC_BC SC_K_BC
#else
#define SC_BC ((int)blockDim.x)
#endif
#ifdef SC_K_ROWS
#define SC_ROWS(p) SC_K_ROWS
#else
#define SC_ROWS(p) ((p).rows)
#endif
#ifdef SC_K_RING
#define SC_RING(p) SC_K_RING
#else
#define SC_RING(p) ((p).ring)
#endif
#ifdef SC_K_NPCT
#define SC_NPCT(p) SC_K_NPCT
#else
#define SC_NPCT(p) ((p).n_pct)
#endif
#ifdef SC_K_RING_GLOBAL
#define SC_RING_GLOBAL(p) (SC_K_RING_GLOBAL != 0)
#else
#define SC_RING_GLOBAL(p) ((p).ring_global != 0)
#endif
#ifdef SC_K_HINTS
#define SC_HINTS(p) (SC_K_HINTS != 0)
#else
#define SC_HINTS(p) ((p).use_hints != 0)
#endif
#ifdef SC_K_POOL_STRIDE
#define SC_POOL_STRIDE(p) ((sc_i64)SC_K_POOL_STRIDE)
#else
#define SC_POOL_STRIDE(p) ((p).pool_stride)
#endif
// every group has SC_K_GLEN (1..SC_SORT_MAX) rows, consecutive in the pool; 0: not known
#ifdef SC_K_GLEN
#define SC_GLEN SC_K_GLEN
#else
#define SC_GLEN 0
#endif
// every target has SC_K_NL groups (the kernel's MAXL); 0: not known
#ifdef SC_K_NL
#define SC_NL SC_K_NL
#else
#define SC_NL 0
#endif

// Ring rows the searches read (SC_K_HOT_LO..SC_K_HOT_HI: around the percentiles' rows in a
// full group); the others are written with a streaming hint, so that the caches keep room for
// the ones read (13.53 ms against 13.85 ms for the reference job on an H200, float64 29.4
// against 30.0 ms). Only with the ring in device memory; without the constants every row is
// hot. Any row may still be read: the hint only orders evictions.
#if defined(SC_K_HOT_LO) && defined(SC_K_HOT_HI) && defined(SC_K_RING_GLOBAL) && !defined(SC_NO_COLD_STREAM)
#if !SC_K_RING_GLOBAL
#error "streaming stores need the ring in device memory"
#endif
#define SC_COLD_ROW(r) ((r) < SC_K_HOT_LO || (r) > SC_K_HOT_HI)
#else
#define SC_COLD_ROW(r) false
#endif

// Stop a kernel compiled for other launch constants than its launch's.
SC_DEVICE void check_launch(const ClimParams& p) {
    bool bad = p.rows > 0x10000;  // a row must fit the 16 bits `walk_sorted` gives it
#ifdef SC_K_BC
    bad |= blockDim.x != SC_K_BC;
#endif
#ifdef SC_K_ROWS
    bad |= p.rows != SC_K_ROWS;
#endif
#ifdef SC_K_RING
    bad |= p.ring != SC_K_RING;
#endif
#ifdef SC_K_NPCT
    bad |= p.n_pct != SC_K_NPCT;
#endif
#ifdef SC_K_RING_GLOBAL
    bad |= (p.ring_global != 0) != (SC_K_RING_GLOBAL != 0);
#endif
#ifdef SC_K_HINTS
    bad |= (p.use_hints != 0) != (SC_K_HINTS != 0);
#endif
#ifdef SC_K_POOL_STRIDE
    bad |= p.pool_stride != (sc_i64)SC_K_POOL_STRIDE;
#endif
    if (bad) sc_trap();
}

#define SC_POOL_LOAD(ptr) sc_load_stream(ptr)

// Order-preserving keys: a < b as floats (total order, -0 < +0) iff key(a) < key(b).
template <typename T>
struct Keys;

template <>
struct Keys<float> {
    typedef sc_u32 K;
    static const K MIN = 0u;
    static const K MAX = 0xffffffffu;
    static const K EXP = 0x7f800000u;
    static SC_DEVICE K exp_bits(float v) { return sc_float_bits(v) & EXP; }
    static SC_DEVICE bool finite(float v) { return exp_bits(v) != EXP; }
    // negative: all bits flipped; else the sign bit set (a shift and one three-input logic op)
    static SC_DEVICE K key(float v) {
        sc_u32 b = sc_float_bits(v);
        return b ^ ((sc_u32)((int)b >> 31) | 0x80000000u);
    }
    // finite values' keys lie between those of -FLT_MAX (0x00800000) and +FLT_MAX (0xff7fffff)
    static SC_DEVICE bool finite_key(K k) { return k - 0x00800000u < 0xff000000u; }
    static SC_DEVICE double value(K k) { return (double)sc_bits_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k); }
};

template <>
struct Keys<double> {
    typedef sc_u64 K;
    static const K MIN = 0ull;
    static const K MAX = 0xffffffffffffffffull;
    static const K EXP = 0x7ff0000000000000ull;
    static SC_DEVICE K exp_bits(double v) { return sc_double_bits(v) & EXP; }
    static SC_DEVICE bool finite(double v) { return exp_bits(v) != EXP; }
    static SC_DEVICE K key(double v) {
        sc_u64 b = sc_double_bits(v);
        return b ^ ((sc_u64)((long long)b >> 63) | 0x8000000000000000ull);
    }
    // between the keys of -DBL_MAX (0x0010...) and +DBL_MAX (0xffef...)
    static SC_DEVICE bool finite_key(K k) { return k - 0x0010000000000000ull < 0xffe0000000000000ull; }
    static SC_DEVICE double value(K k) {
        return sc_bits_double((k & 0x8000000000000000ull) ? (k & 0x7fffffffffffffffull) : ~k);
    }
};

// Pool storage types and what the kernel computes with: float and double as they are; int16
// pools hold the file's integers, decoded through the pool's table into double.
template <typename S>
struct Compute {
    typedef S stored;
    typedef S type;
    static SC_DEVICE S zero() { return (S)0; }
    static SC_DEVICE S load(S v, const double*) { return v; }
};

template <>
struct Compute<short> {
    typedef short stored;
    typedef double type;
    static SC_DEVICE double zero() { return 0.0; }
    static SC_DEVICE double load(short v, const double* lut) { return __ldg(lut + (int)v + 32768); }
};

// Int16 pools whose decoding table is ordered (non-decreasing over the integers it decodes as
// valid, in the CPU engine's total order of values; the backend checks the table, see
// `src/engine/gpu/ordered.rs`): a sample's key is its integer plus 32769 (1..65536, clear of
// the sentinels 0 and all ones), so groups sort and searches compare 32-bit keys as for
// float32 pools, the ring holds 4-byte keys, and the table is read only for a sample's
// validity and its sum, and for the results. Any order among integers decoding to one value
// gives the same values at every rank.
struct sc_i16_ordered;  // kernel tag: int16 pool, ordered table
struct sc_i16key {
    sc_u32 k;
};

template <>
struct Compute<sc_i16_ordered> {
    typedef short stored;
    typedef sc_i16key type;
    static SC_DEVICE sc_i16key zero() {
        sc_i16key z;
        z.k = 0u;
        return z;
    }
    static SC_DEVICE sc_i16key load(short v, const double*) {
        sc_i16key z;
        z.k = (sc_u32)((int)v + 32769);
        return z;
    }
};

template <>
struct Keys<sc_i16key> {
    typedef sc_u32 K;
    static const K MIN = 0u;
    static const K MAX = 0xffffffffu;
};

// The value a key stands for: the key's own value, or (ordered int16 pools) its integer's
// decoded value from the pool's table (NaN for a sentinel, which is never a result).
template <typename T>
SC_DEVICE double sc_key_value(typename Keys<T>::K k, const double*) {
    return Keys<T>::value(k);
}
template <>
SC_DEVICE double sc_key_value<sc_i16key>(sc_u32 k, const double* lut) {
    return k - 1u < 65536u ? __ldg(lut + (k - 1u)) : sc_bits_double(0x7ff8000000000000ull);
}

// The CPU engine's interpolation (src/percentile.rs `lerp`), exact at both ends.
SC_DEVICE double sc_lerp(double lo, double hi, double frac) {
    double diff = sc_sub(hi, lo);
    return frac < 0.5 ? sc_add(lo, sc_mul(diff, frac)) : sc_sub(hi, sc_mul(diff, sc_sub(1.0, frac)));
}

// BEGIN sort network (scripts/gen-sort-network.py)
// 11 keys, 38 compare-exchanges; SC_CX(a, b) orders keys a and b (a < b)
#define SC_SORT11_NETWORK(SC_CX) \
    SC_CX(0, 1) SC_CX(2, 3) SC_CX(4, 5) SC_CX(6, 7) SC_CX(8, 9) SC_CX(0, 2) SC_CX(1, 3) SC_CX(4, 6) \
    SC_CX(5, 7) SC_CX(8, 10) SC_CX(1, 2) SC_CX(5, 6) SC_CX(9, 10) SC_CX(0, 4) SC_CX(1, 5) SC_CX(2, 6) \
    SC_CX(3, 7) SC_CX(2, 4) SC_CX(3, 5) SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) SC_CX(9, 10) SC_CX(0, 8) \
    SC_CX(1, 9) SC_CX(2, 10) SC_CX(4, 8) SC_CX(5, 9) SC_CX(6, 10) SC_CX(2, 4) SC_CX(3, 5) SC_CX(6, 8) \
    SC_CX(7, 9) SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) SC_CX(7, 8) SC_CX(9, 10)
// 12 keys, 42 compare-exchanges; SC_CX(a, b) orders keys a and b (a < b)
#define SC_SORT12_NETWORK(SC_CX) \
    SC_CX(0, 1) SC_CX(2, 3) SC_CX(4, 5) SC_CX(6, 7) SC_CX(8, 9) SC_CX(10, 11) SC_CX(0, 2) SC_CX(1, 3) \
    SC_CX(4, 6) SC_CX(5, 7) SC_CX(8, 10) SC_CX(9, 11) SC_CX(1, 2) SC_CX(5, 6) SC_CX(9, 10) SC_CX(0, 4) \
    SC_CX(1, 5) SC_CX(2, 6) SC_CX(3, 7) SC_CX(2, 4) SC_CX(3, 5) SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) \
    SC_CX(9, 10) SC_CX(0, 8) SC_CX(1, 9) SC_CX(2, 10) SC_CX(3, 11) SC_CX(4, 8) SC_CX(5, 9) SC_CX(6, 10) \
    SC_CX(7, 11) SC_CX(2, 4) SC_CX(3, 5) SC_CX(6, 8) SC_CX(7, 9) SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) \
    SC_CX(7, 8) SC_CX(9, 10)
// 32 keys, 191 compare-exchanges; SC_CX(a, b) orders keys a and b (a < b)
#define SC_SORT32_NETWORK(SC_CX) \
    SC_CX(0, 1) SC_CX(2, 3) SC_CX(4, 5) SC_CX(6, 7) SC_CX(8, 9) SC_CX(10, 11) SC_CX(12, 13) SC_CX(14, 15) \
    SC_CX(16, 17) SC_CX(18, 19) SC_CX(20, 21) SC_CX(22, 23) SC_CX(24, 25) SC_CX(26, 27) SC_CX(28, 29) SC_CX(30, 31) \
    SC_CX(0, 2) SC_CX(1, 3) SC_CX(4, 6) SC_CX(5, 7) SC_CX(8, 10) SC_CX(9, 11) SC_CX(12, 14) SC_CX(13, 15) \
    SC_CX(16, 18) SC_CX(17, 19) SC_CX(20, 22) SC_CX(21, 23) SC_CX(24, 26) SC_CX(25, 27) SC_CX(28, 30) SC_CX(29, 31) \
    SC_CX(1, 2) SC_CX(5, 6) SC_CX(9, 10) SC_CX(13, 14) SC_CX(17, 18) SC_CX(21, 22) SC_CX(25, 26) SC_CX(29, 30) \
    SC_CX(0, 4) SC_CX(1, 5) SC_CX(2, 6) SC_CX(3, 7) SC_CX(8, 12) SC_CX(9, 13) SC_CX(10, 14) SC_CX(11, 15) \
    SC_CX(16, 20) SC_CX(17, 21) SC_CX(18, 22) SC_CX(19, 23) SC_CX(24, 28) SC_CX(25, 29) SC_CX(26, 30) SC_CX(27, 31) \
    SC_CX(2, 4) SC_CX(3, 5) SC_CX(10, 12) SC_CX(11, 13) SC_CX(18, 20) SC_CX(19, 21) SC_CX(26, 28) SC_CX(27, 29) \
    SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) SC_CX(9, 10) SC_CX(11, 12) SC_CX(13, 14) SC_CX(17, 18) SC_CX(19, 20) \
    SC_CX(21, 22) SC_CX(25, 26) SC_CX(27, 28) SC_CX(29, 30) SC_CX(0, 8) SC_CX(1, 9) SC_CX(2, 10) SC_CX(3, 11) \
    SC_CX(4, 12) SC_CX(5, 13) SC_CX(6, 14) SC_CX(7, 15) SC_CX(16, 24) SC_CX(17, 25) SC_CX(18, 26) SC_CX(19, 27) \
    SC_CX(20, 28) SC_CX(21, 29) SC_CX(22, 30) SC_CX(23, 31) SC_CX(4, 8) SC_CX(5, 9) SC_CX(6, 10) SC_CX(7, 11) \
    SC_CX(20, 24) SC_CX(21, 25) SC_CX(22, 26) SC_CX(23, 27) SC_CX(2, 4) SC_CX(3, 5) SC_CX(6, 8) SC_CX(7, 9) \
    SC_CX(10, 12) SC_CX(11, 13) SC_CX(18, 20) SC_CX(19, 21) SC_CX(22, 24) SC_CX(23, 25) SC_CX(26, 28) SC_CX(27, 29) \
    SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) SC_CX(7, 8) SC_CX(9, 10) SC_CX(11, 12) SC_CX(13, 14) SC_CX(17, 18) \
    SC_CX(19, 20) SC_CX(21, 22) SC_CX(23, 24) SC_CX(25, 26) SC_CX(27, 28) SC_CX(29, 30) SC_CX(0, 16) SC_CX(1, 17) \
    SC_CX(2, 18) SC_CX(3, 19) SC_CX(4, 20) SC_CX(5, 21) SC_CX(6, 22) SC_CX(7, 23) SC_CX(8, 24) SC_CX(9, 25) \
    SC_CX(10, 26) SC_CX(11, 27) SC_CX(12, 28) SC_CX(13, 29) SC_CX(14, 30) SC_CX(15, 31) SC_CX(8, 16) SC_CX(9, 17) \
    SC_CX(10, 18) SC_CX(11, 19) SC_CX(12, 20) SC_CX(13, 21) SC_CX(14, 22) SC_CX(15, 23) SC_CX(4, 8) SC_CX(5, 9) \
    SC_CX(6, 10) SC_CX(7, 11) SC_CX(12, 16) SC_CX(13, 17) SC_CX(14, 18) SC_CX(15, 19) SC_CX(20, 24) SC_CX(21, 25) \
    SC_CX(22, 26) SC_CX(23, 27) SC_CX(2, 4) SC_CX(3, 5) SC_CX(6, 8) SC_CX(7, 9) SC_CX(10, 12) SC_CX(11, 13) \
    SC_CX(14, 16) SC_CX(15, 17) SC_CX(18, 20) SC_CX(19, 21) SC_CX(22, 24) SC_CX(23, 25) SC_CX(26, 28) SC_CX(27, 29) \
    SC_CX(1, 2) SC_CX(3, 4) SC_CX(5, 6) SC_CX(7, 8) SC_CX(9, 10) SC_CX(11, 12) SC_CX(13, 14) SC_CX(15, 16) \
    SC_CX(17, 18) SC_CX(19, 20) SC_CX(21, 22) SC_CX(23, 24) SC_CX(25, 26) SC_CX(27, 28) SC_CX(29, 30)
// END sort network

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
    unsigned char* pos;   // [percentile][slot][cell], this thread's cell: see select_ranks
    int rows, bc, tid, slots, n_pct;
    // offset of slot `slot`, row `row` from this thread's column `kcol`
    SC_DEVICE int slot_row(int slot, int row) const { return (slot * rows + row) * bc; }
};

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
// 7.02 against 7.20 ms; bench-results/sentinels-once-2026-12-01-h200). An empty group still
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

// The heads of a target's groups in order, largest first, each with its entry (see
// `walk_sorted`): Batcher's network for the kernel's number of groups.
template <int MAXL>
struct HeadSort;
#define SC_HX(a, b)                             \
    {                                           \
        const bool swap_ = h[a] < h[b];         \
        const K ha_ = swap_ ? h[b] : h[a];      \
        const K hb_ = swap_ ? h[a] : h[b];      \
        const int ea_ = swap_ ? e[b] : e[a];    \
        const int eb_ = swap_ ? e[a] : e[b];    \
        h[a] = ha_;                             \
        h[b] = hb_;                             \
        e[a] = ea_;                             \
        e[b] = eb_;                             \
    }
#define SC_HEAD_SORT(N)                                                    \
    template <>                                                            \
    struct HeadSort<N> {                                                   \
        template <typename K>                                              \
        static SC_DEVICE void sort(K (&h)[N], int (&e)[N]) { SC_SORT##N##_NETWORK(SC_HX) } \
    };
SC_HEAD_SORT(11)
SC_HEAD_SORT(12)
SC_HEAD_SORT(32)
#undef SC_HEAD_SORT
#undef SC_HX

// A head's entry says where its key lies. In a kernel compiled for its launch's ring geometry
// (SC_K_ROWS, SC_K_BC) the entry is the key's offset from the thread's column, slot *
// slot_stride + row * step: a step's next key is then one addition and one load away, and the
// slot and row come back by divisions by constants (a walk step 61 instructions against 65
// with slot << 16 | row; 11.85 against 11.91 ms for the reference job on an H200). Elsewhere
// it is slot << 16 | row, which needs no division.
#if defined(SC_K_ROWS) && defined(SC_K_BC)
#define SC_ENTRY(slot, row, ss, st) ((slot) * (ss) + (row) * (st))
#define SC_ENTRY_NEXT(e, dir, st) ((e) + (dir) * (st))
#define SC_ENTRY_OFF(e, ss, st) (e)
#define SC_ENTRY_SLOT(e, ss, st) ((int)((unsigned)(e) / (unsigned)(SC_K_ROWS * SC_K_BC)))
#define SC_ENTRY_ROW(e, ss, st) ((int)((unsigned)(e) % (unsigned)(SC_K_ROWS * SC_K_BC) / (unsigned)SC_K_BC))
#else
#define SC_ENTRY(slot, row, ss, st) ((slot) << 16 | (row))
#define SC_ENTRY_NEXT(e, dir, st) ((e) + (dir))
#define SC_ENTRY_OFF(e, ss, st) (((e) >> 16) * (ss) + ((e) & 0xffff) * (st))
#define SC_ENTRY_SLOT(e, ss, st) ((e) >> 16)
#define SC_ENTRY_ROW(e, ss, st) ((e) & 0xffff)
#endif

// Take `steps` samples off the groups' heads `h`, best first: down (largest first) where
// `down`, else up. Keys travel XOR `flip` (none flipped going down, all going up), so either
// way the best head is the largest transformed one and the sentinels, and absent groups, become
// 0, never taken. One loop serves lanes walking either way: a warp pays its longest walk, not
// its longest walk down plus its longest walk up.
//
// The heads are kept sorted, best first, each with its entry `e`: its group's ring slot << 16 |
// the head's row (-1: an absent group). A step takes head 0, loads the next key of its group,
// from the entry alone, and inserts it among the other heads, which move up one place until
// it fits, all in registers: one comparison and four selections a group, against a tournament's
// comparison and selections plus the bookkeeping of which group won (68 instructions a step
// against 125; 13.28 ms against 13.67 ms for the reference job on an H200). Sorting the heads
// first costs 38 compare-exchanges for 11 groups. `following` is the best head left, the
// value a further step would take; `before` the value taken before the last.
template <typename K, int MAXL>
SC_DEVICE K walk_sorted(const K* keys, K (&h)[MAXL], int (&e)[MAXL], int slot_stride, int step, int col,
                        int steps, bool down, K& before, K& following) {
    const K flip = down ? (K)0 : (K)~(K)0;
    const int dir = down ? -1 : 1;
#pragma unroll
    for (int j = 0; j < MAXL; ++j) h[j] ^= flip;
    HeadSort<MAXL>::sort(h, e);
    K last = 0, prev = 0;
    for (int s = 0; s < steps; ++s) {
        prev = last;
        last = h[0];
        const int ne = SC_ENTRY_NEXT(e[0], dir, step);  // sentinels are never taken: the row stays in its slot
        const K nk = keys[SC_ENTRY_OFF(ne, slot_stride, step) + col] ^ flip;
        // heads 1.. move up one place each: head i + 1 to place i while it is at least the new
        // one, the new one to the first place after those, and the rest keep their place
        bool prev_stays = true;  // head i (place i - 1 now) is at least the new one
#pragma unroll
        for (int i = 0; i < MAXL; ++i) {
            if (i + 1 < MAXL) {
                const bool stays = h[i + 1] >= nk;
                h[i] = stays ? h[i + 1] : (prev_stays ? nk : h[i]);
                e[i] = stays ? e[i + 1] : (prev_stays ? ne : e[i]);
                prev_stays = stays;
            } else {
                h[i] = prev_stays ? nk : h[i];
                e[i] = prev_stays ? ne : e[i];
            }
        }
    }
    following = h[0] ^ flip;
    before = prev ^ flip;
    return last ^ flip;
}

// The values at 1-based ranks `r` and `r + 1` (when `need_next`) among the `n` valid samples
// of the target's groups (ring slots `slot[j]`; slot s holds counts[s * step] valid samples).
// Row q of ring slot s lies at keys[s * slot_stride + q * step + col]. Group j's row 0 and count
// are recomputed from its slot where needed, not kept in registers through the search: with
// the ring's column pointer made opaque (`sc_global_column`) the float32 kernel needs 72
// registers instead of 80 and 5 % fewer instructions (11.85 ms against 12.37 ms for the
// reference job on an H200; 12.18 ms without the opaque pointer; capped at 64 registers, 32
// warps a multiprocessor, 12.67 ms).
//
// With a hint (this percentile's value at the previous target day), each group's count of
// samples at or below it is found by moving that group's stored position (`pos`, one byte per
// slot, left by the previous target or set when the group was staged) the few rows the hint
// moved; the walk then starts there. Without one, or when an end is nearer, it starts at the
// nearer end. Positions are left for the next target either way.
template <typename K, int MAXL>
SC_DEVICE void select_ranks(const K* keys, const int* counts, const int (&slot)[MAXL], int nl, int slot_stride,
                            int step, int col, int n, int r, bool need_next, bool have_hint, K hint,
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
                const int c = counts[slot[j] * step];
                q = q < c ? q : c;
                le[j] = q;
                at[j] = keys[(slot[j] * slot_stride + col) + q * step];
                above[j] = keys[(slot[j] * slot_stride + col) + (q + 1) * step];
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
                    b = keys[(slot[j] * slot_stride + col) + (q + 1) * step];
                }
                while (a > hint) {  // row 0 holds kmin
                    --q;
                    b = a;
                    a = keys[(slot[j] * slot_stride + col) + q * step];
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
            le[j] = from_top && j < nl ? counts[slot[j] * step] : 0;
            at[j] = j < nl ? keys[(slot[j] * slot_stride + col) + le[j] * step] : kmin;
            above[j] = j < nl ? keys[(slot[j] * slot_stride + col) + (le[j] + 1) * step] : kmax;
        }
    }
    K h[MAXL];
    K before;
    // x(r) is the (below - r + 1)-th largest at or below the start, or the (r - below)-th
    // smallest above it; x(r + 1) is the value taken before x(r) going down (or, one step
    // down, the smallest above the start) and, going up, the smallest head the walk leaves
    // (not one more step: 18.0 ms against 18.35 ms)
    const bool down = r <= below;
    K above_min = kmax;
    int e[MAXL];  // each head's entry (SC_ENTRY), -1 for absent groups
#pragma unroll
    for (int j = 0; j < MAXL; ++j) {
        e[j] = j < nl ? SC_ENTRY(slot[j], down ? le[j] : le[j] + 1, slot_stride, step) : -1;
        h[j] = down ? at[j] : above[j];
        above_min = above[j] < above_min ? above[j] : above_min;
    }
    const int steps = down ? below - r + 1 : r - below;
    K following;
    const K last = walk_sorted<K, MAXL>(keys, h, e, slot_stride, step, col, steps, down, before, following);
    x_r = last;
    if (down) {
        if (need_next) x_next = steps >= 2 ? before : above_min;
    } else {
        x_next = following;
    }
    // positions for the next target: about where x(r) lies in each group (the heads' rows, one
    // up going up)
#pragma unroll
    for (int j = 0; j < MAXL; ++j) {
        if (SC_NL == MAXL || e[j] >= 0) {
            const int f = SC_ENTRY_ROW(e[j], slot_stride, step) - (down ? 0 : 1);
            pos[SC_ENTRY_SLOT(e[j], slot_stride, step) * pos_step] = (unsigned char)(f < 0 ? 0 : (f > 255 ? 255 : f));
        }
    }
}

template <typename S, int MAXL>
SC_DEVICE void climatology(const ClimParams& p) {
    typedef typename Compute<S>::type T;
    typedef typename Keys<T>::K K;
    extern __shared__ double sc_shared[];
    check_launch(p);
    const int bc = SC_BC;
    const int tid = threadIdx.x;
    // The block's warps meet after every load (a barrier at the end of each pass below): warps
    // left to drift apart run different stretches of this long kernel at once, and stall on
    // instruction fetch (29.8 ms without the barrier, 27.4 ms with it for the reference job on
    // an H200; again after the sorted-heads walk: float32 1.4 % faster without it, float64
    // 31.2 ms against 28.0 ms, so it stays for float64 and int16 pools; float32 kernels on CUDA
    // run without it since the register-lean search, 11.79 ms against 11.88 ms). Every thread
    // stays to the end: threads past the last cell compute the last cell again, write nothing.
    const bool active = blockIdx.x * bc + tid < p.n_cells;
    const int cell = active ? blockIdx.x * bc + tid : p.n_cells - 1;

    // Shared memory: sums, then (unless they live in device memory) the keys, then counts,
    // hints and positions. With `ring_global`, each block's keys lie in device memory.
    Ring<K> ring;
    ring.sums = sc_shared;
    int* after_keys;
    const int n_ring = SC_RING(p), n_rows = SC_ROWS(p), n_pct = SC_NPCT(p);
    if (SC_RING_GLOBAL(p)) {
        ring.keys = (K*)p.ring_global + (sc_i64)blockIdx.x * n_ring * n_rows * bc;
        after_keys = (int*)(ring.sums + n_ring * bc);
    } else {
        ring.keys = (K*)(ring.sums + n_ring * bc);
        after_keys = (int*)(ring.keys + (sc_i64)n_ring * n_rows * bc);
    }
    ring.kcol = SC_RING_GLOBAL(p) ? sc_global_column(ring.keys + tid) : ring.keys + tid;
    ring.counts = after_keys;
    ring.rows = n_rows;
    ring.bc = bc;
    ring.tid = tid;
    ring.slots = n_ring;
    ring.n_pct = n_pct;
    // each percentile's value at the previous target day (MIN: none yet), after the counts;
    // then the positions
    K* hints = (K*)(ring.counts + n_ring * bc) + tid;
    ring.hints = hints;
    ring.pos = (unsigned char*)((K*)(ring.counts + n_ring * bc) + n_pct * bc) + tid;
    for (int i = 0; i < n_pct; ++i) hints[i * bc] = Keys<T>::MIN;
    if (SC_SENTINELS_ONCE) {
        for (int s = 0; s < n_ring; ++s) {
            ring.kcol[ring.slot_row(s, 0)] = (K)0;
            ring.kcol[ring.slot_row(s, SC_GLEN + 1)] = (K)~(K)0;
        }
    }
    const double nan = sc_bits_double(0x7ff8000000000000ull);
    const int n_stats = 1 + n_pct;
    const sc_i64 out_cell = p.out_cell0 + cell;

    // One pass over the batch's loads, in order: fetch, sort and stage load i's group, then
    // search every target whose groups are all staged. The fetch, the store and the search
    // each appear once in the code (the kernel's straight-line code outgrows the instruction
    // caches otherwise). A group is fetched right before it is stored: fetching it one pass
    // ahead, to have its loads in flight during the searches, held its 32 values in registers
    // through them and cost more than it hid (20.6 ms against 19.0 ms on the H200).
    const int l0 = p.load_start[0], l_end = p.load_start[p.n_batch];
    int t = 0;
    for (int li = l0; li < l_end; ++li) {
        {
            const int g = __ldg(p.loads + 2 * li), slot = __ldg(p.loads + 2 * li + 1);
            if (!SC_GLEN && p.group_off[g + 1] - p.group_off[g] > SC_SORT_MAX) {
                stage_long_group<S>(p, ring, g, slot, cell);
            } else {
                T v[SC_SORT_MAX];
                const int len = fetch_group<S>(p, g, cell, v);
                stage_group<T>(ring, v, len, slot, p.lut);
            }
        }
        for (; t < p.n_batch && p.load_start[t + 1] <= li + 1; ++t) {
#if SC_NL
            if (p.target_nl[t] != SC_NL) sc_trap();
            const int nl = SC_NL;
#else
            const int nl = p.target_nl[t];
#endif
            int slots[MAXL];
            int n = 0;
            double total = 0.0;
#pragma unroll
            for (int j = 0; j < MAXL; ++j) {
                slots[j] = 0;
                if (j < nl) {
                    const int slot = __ldg(p.target_lists + t * MAXL + j);
                    slots[j] = slot;
                    n += ring.counts[slot * bc + tid];
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
            for (int i = 0; i < n_pct && i < SC_MAX_PCT; ++i) {
                int lo = p.pos_lo[n * n_pct + i];
                double frac = p.pos_frac[n * n_pct + i];
                K x_lo, x_hi = 0;
                const K hint = hints[i * bc];
                select_ranks<K, MAXL>(ring.kcol, ring.counts + tid, slots, nl, n_rows * bc, bc, 0, n, lo, frac != 0.0,
                                      SC_HINTS(p) && hint != Keys<T>::MIN, hint, ring.pos + i * n_ring * bc, bc, x_lo,
                                      x_hi);
                hints[i * bc] = x_lo;
                double v_lo = sc_key_value<T>(x_lo, p.lut);
                if (active)
                    out[(1 + i) * stat_stride] = frac == 0.0 ? v_lo : sc_lerp(v_lo, sc_key_value<T>(x_hi, p.lut), frac);
            }
        }
#ifdef SC_VENDOR_CUDA
        if (sizeof(T) != 4) __syncthreads();  // see above: float32 runs without it on CUDA
#else
        __syncthreads();
#endif
    }
}

// Blocks of 256 threads a multiprocessor must hold at least: caps registers per thread
// (nvcc and NVRTC ignore --maxrregcount for kernels with launch bounds). The generic float32
// kernels run best uncapped (127 registers); compiled for their launch constants on CUDA,
// those for windows of 11 or 12 groups need fewer and run best capped at 85 (80 used, 13.87 ms
// against 14.32 ms for the reference job on an H200 with blocks of 64 threads, see
// bench-results/kernel-launch-constants-2026-12-01-h200; after the sorted-heads walk, 12.36 ms
// against 12.98 ms at 72 registers, bench-results/kernel-sorted-walk-2026-12-01-h200). The
// float64 ones for windows of 11 or 12 groups are capped at 128 on CUDA (34.5 ms against
// 36.9 ms; after the sorted-heads walk 28.6 ms against 29.1 ms at 96 registers and 29.3 ms at
// 80; on gfx906 the cap would spill them, see sstclim_port.h). The int16 kernels (not timed:
// bench-kernel fills float pools) and the 32-group ones stay uncapped rather than risk spills.
// SC_MIN_BLOCKS overrides all, for measuring.
#ifdef SC_MIN_BLOCKS
#define SC_MINB_FREE SC_MIN_BLOCKS
#define SC_MINB_CAPPED SC_MIN_BLOCKS
#define SC_MINB_F32 SC_MIN_BLOCKS
#else
#define SC_MINB_FREE 1
#define SC_MINB_CAPPED SC_CAPPED_MIN_BLOCKS  // sstclim_port.h: 2 on CUDA, 1 on HIP
#if defined(SC_VENDOR_CUDA) && defined(SC_K_BC)
#define SC_MINB_F32 3
#else
#define SC_MINB_F32 1
#endif
#endif

// The instantiations the engines load by name: sample type x largest window (groups per target).
#define SC_KERNEL(NAME, T, MAXL, MINB)                                                 \
    extern "C" __global__ void __launch_bounds__(256, MINB) NAME(const ClimParams p) { \
        climatology<T, MAXL>(p);                                                       \
    }

// A run-time compiler builds only the one it needs (-DSC_SELECT -DSC_WANT_<name>); hipcc
// builds all twelve into the code object.
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f32_l11)
SC_KERNEL(sstclim_clim_f32_l11, float, 11, SC_MINB_F32)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f64_l11)
SC_KERNEL(sstclim_clim_f64_l11, double, 11, SC_MINB_CAPPED)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16_l11)
SC_KERNEL(sstclim_clim_i16_l11, short, 11, SC_MINB_FREE)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f32_l12)
SC_KERNEL(sstclim_clim_f32_l12, float, 12, SC_MINB_F32)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f32_l32)
SC_KERNEL(sstclim_clim_f32_l32, float, 32, SC_MINB_FREE)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f64_l12)
SC_KERNEL(sstclim_clim_f64_l12, double, 12, SC_MINB_CAPPED)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_f64_l32)
SC_KERNEL(sstclim_clim_f64_l32, double, 32, SC_MINB_FREE)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16_l12)
SC_KERNEL(sstclim_clim_i16_l12, short, 12, SC_MINB_FREE)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16_l32)
SC_KERNEL(sstclim_clim_i16_l32, short, 32, SC_MINB_FREE)
#endif
// int16 pools with an ordered decoding table: 4-byte keys, capped as float32
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16o_l11)
SC_KERNEL(sstclim_clim_i16o_l11, sc_i16_ordered, 11, SC_MINB_F32)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16o_l12)
SC_KERNEL(sstclim_clim_i16o_l12, sc_i16_ordered, 12, SC_MINB_F32)
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_clim_i16o_l32)
SC_KERNEL(sstclim_clim_i16o_l32, sc_i16_ordered, 32, SC_MINB_FREE)
#endif
