// params.h: what a launch of the climatology kernel is told. The argument block (`ClimParams`,
// passed by value), the kernel's fixed limits, and the launch constants that can replace
// arguments: a kernel compiled for its launch (-DSC_K_<NAME>=<value>) folds them into the code,
// one built ahead of time reads them from `ClimParams`. `check_launch` stops a kernel launched
// with other values than it was compiled for.
#pragma once

#include "sstclim_port.h"

// Kernel arguments; mirrored by `KernelParams` in src/engine/gpu (same order, same sizes:
// pointers and 64-bit fields first, then 32-bit ones). A unit test there (source.rs) compiles
// this header on the host (tests/kernels/params_layout.cpp) and compares the size and every
// field's offset and size: a field added here goes in both lists.
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
// stops with a trap (`check_launch`; per group in `fetch_group`, per target in `climatology`)
// instead of computing.
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
