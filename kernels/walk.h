// walk.h: order statistics from a target's staged groups, without sorting the window.
// `select_ranks` gives the values at a rank and the next; `walk_sorted` walks the groups'
// heads, kept sorted in registers (`HeadSort`); a head's entry (`SC_ENTRY`) says where its key
// lies in the ring.
//
// Each percentile keeps its value at the previous target day and, per group, how many samples
// lie at or below it; those positions move the few rows the value moves (days are close),
// which gives the start's rank, and a walk over the groups' heads goes the remaining ranks, up
// or down. When there is no previous value, or an end of the window is nearer, the walk starts
// at that end. Each step takes the best head and inserts the next key of its group among the
// others.
#pragma once

#include "params.h"
#include "sort_network.inc"
#include "sstclim_port.h"

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
