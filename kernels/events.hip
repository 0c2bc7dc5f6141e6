// events.hip: marine heatwaves and cold spells of every cell of a band, on the GPU, bit for bit
// as the CPU scan finds and measures them (src/events/scan.rs, detect.rs, metrics.rs,
// summary.rs). One HIP C++ source for both vendors, like climatology.hip: hipcc compiles it
// ahead of time, NVRTC at run time (one instantiation, -DSC_SELECT -DSC_WANT_<name>).
//
// One thread owns one cell of the band and walks its series day by day: adjacent threads read
// adjacent cells of the day-major pool (`pool[slot * pool_stride + cell]`) and of the
// climatology (`[doy * clim_stride + cell]`), so a warp's loads are coalesced. The thread keeps
// its open run of exceeding days and the pending event (closed runs joined across short gaps
// until the next run is too far away), as detect.rs does in one pass from left to right.
//
// Events per cell vary, so a launch runs in two passes: pass 0 counts each cell's events into
// `counts`; the host takes an exclusive scan of them (cell order: the CPU's order) and pass 1
// measures each event again at its offset into the event columns (`[field][event]`). A closed
// event is measured by re-reading its days (and the days before and after, which the rates
// need) with the CPU's float64 operations in the CPU's order: numpy's pairwise sums, never
// contracted into fused multiply-adds (sstclim_port.h). Pass 1 also accumulates the per-year
// statistics as summary.rs's `block_average` does, in float64 in `acc` (`[stat][year][cell]`,
// coalesced across the warp), and stores them as float32 in `summary`, same layout.
//
// Every kind of event (heatwaves, cold spells) is a launch of its own over the same upload.
// NaN results carry the device's NaN, not necessarily the CPU's payload (outputs compare NaN as
// a fill value).
#include "sstclim_port.h"

// The argument block, mirrored by `EventParams` in src/events/gpu/params.rs (every field 8
// bytes: no padding to agree on).
struct EventParams {
    const void* pool;          // [slot][pool_stride]: float, double or short
    const double* table;       // int16 pools: value = table[v + 32768]
    const sc_i64* slot_of_day; // pool slot of each day, -1: missing
    const unsigned short* doy; // each day's day-of-year index
    const unsigned short* year;// each day's year index
    const double* mean;        // [doy][clim_stride]
    const double* thresh;      // [doy][clim_stride]
    int* counts;               // [cell]: pass 0's events per cell
    const sc_i64* offsets;     // [cell]: pass 1's first event of each cell
    int* ints;                 // [8][n_events]
    double* floats;            // [14][n_events]
    signed char* category;     // [n_events]
    double* acc;               // [19 * n_years][n_cells]
    float* summary;            // [19 * n_years][n_cells]
    sc_i64 pool_stride, clim_stride, n_events, n_cells, n_days, n_doy, n_years;
    sc_i64 min_duration, max_gap;  // max_gap < 0: events are never joined
    sc_i64 cold, pass;
};

#define SC_EV_STATS 19
#define SC_EV_BLOCK 256

SC_DEVICE double sc_ev_nan() { return sc_bits_double(0x7ff8000000000000ULL); }
SC_DEVICE bool sc_ev_isnan(double v) { return v != v; }

// What each pool type is computed as (float64, as `value` in scan.rs).
SC_DEVICE double sc_ev_value(const float* p, const double*, sc_i64 at) { return (double)p[at]; }
SC_DEVICE double sc_ev_value(const double* p, const double*, sc_i64 at) { return p[at]; }
SC_DEVICE double sc_ev_value(const short* p, const double* table, sc_i64 at) { return table[(int)p[at] + 32768]; }

// One cell's series for one kind: day i's temperature (missing days take the mean, signed for
// cold spells), mean and threshold, as scan.rs's `fill_series` builds them.
template <typename T>
struct SeriesView {
    const T* pool;
    const double* table;
    const sc_i64* slot;
    const unsigned short* doy;
    const double* mean;
    const double* thresh;
    sc_i64 stride, cstride, cell;
    double sign;

    SC_DEVICE void at(sc_i64 i, double& t, double& seas, double& th) const {
        const sc_i64 d = doy[i];
        const double m = sc_mul(sign, mean[d * cstride + cell]);
        const sc_i64 s = slot[i];
        const double v = s >= 0 ? sc_ev_value(pool, table, s * stride + cell) : sc_ev_nan();
        seas = m;
        th = sc_mul(sign, thresh[d * cstride + cell]);
        t = sc_ev_isnan(v) ? m : sc_mul(sign, v);
    }
};

// The event's days as one of the three series measure_at takes statistics of (rel_seas = t -
// seas, rel_thresh = t - thresh, abs = t), element j = day s + j, or their squared deviations
// from `dev_mean` when `dev` is set.
template <typename T>
struct EventSeries {
    const SeriesView<T>* v;
    sc_i64 s;
    int which;
    bool dev;
    double dev_mean;

    SC_DEVICE double operator()(sc_i64 j) const {
        double t, seas, th;
        v->at(s + j, t, seas, th);
        const double x = which == 0 ? sc_sub(t, seas) : which == 1 ? sc_sub(t, th) : t;
        if (!dev) return x;
        const double d = sc_sub(x, dev_mean);
        return sc_mul(d, d);
    }
};

// numpy's pairwise_sum_DOUBLE over elements lo..lo+n of `a`, as metrics.rs's `numpy_sum`: up to
// 128 values with 8 accumulators.
template <typename F>
SC_DEVICE double sc_ev_block_sum(const F& a, sc_i64 lo, sc_i64 n) {
    if (n < 8) {
        double res = 0.0;
        for (sc_i64 i = 0; i < n; ++i) res = sc_add(res, a(lo + i));
        return res;
    }
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a(lo + j);
    sc_i64 i = 8;
    for (; i < n - n % 8; i += 8)
        for (int j = 0; j < 8; ++j) r[j] = sc_add(r[j], a(lo + i + j));
    double res = sc_add(sc_add(sc_add(r[0], r[1]), sc_add(r[2], r[3])), sc_add(sc_add(r[4], r[5]), sc_add(r[6], r[7])));
    for (; i < n; ++i) res = sc_add(res, a(lo + i));
    return res;
}

// The recursion of numpy_sum (halves cut at a multiple of 8, left sum + right sum) walked with
// an explicit stack: device code avoids recursion. 32 levels hold any series of 2^36 days. Most
// events are one block: they return before the stack is touched.
template <typename F>
SC_DEVICE double sc_ev_numpy_sum(const F& a, sc_i64 n) {
    if (n <= 128) return sc_ev_block_sum(a, 0, n);
    sc_i64 lo_[32], n_[32];
    double left[32];
    int phase[32];
    int sp = 0;
    lo_[0] = 0;
    n_[0] = n;
    for (;;) {
        // descend through left halves to a block
        while (n_[sp] > 128) {
            sc_i64 n2 = n_[sp] / 2;
            n2 -= n2 % 8;
            phase[sp] = 1;
            lo_[sp + 1] = lo_[sp];
            n_[sp + 1] = n2;
            ++sp;
        }
        double ret = sc_ev_block_sum(a, lo_[sp], n_[sp]);
        // return through finished right halves; start the right half of a finished left one
        for (;;) {
            if (sp == 0) return ret;
            --sp;
            if (phase[sp] == 1) {
                sc_i64 n2 = n_[sp] / 2;
                n2 -= n2 % 8;
                left[sp] = ret;
                phase[sp] = 2;
                lo_[sp + 1] = lo_[sp] + n2;
                n_[sp + 1] = n_[sp] - n2;
                ++sp;
                break;
            }
            ret = sc_add(left[sp], ret);
        }
    }
}

// mean, population standard deviation and sum of series `which` of the event (metrics.rs's
// `stats`, as numpy computes them).
template <typename T>
SC_DEVICE void sc_ev_stats(const SeriesView<T>& v, sc_i64 s, sc_i64 n, int which, double& mean, double& sd,
                           double& sum) {
    EventSeries<T> x = {&v, s, which, false, 0.0};
    sum = sc_add(0.0, sc_ev_numpy_sum(x, n));
    mean = sc_div(sum, (double)n);
    EventSeries<T> dev = {&v, s, which, true, mean};
    const double var = sc_div(sc_add(0.0, sc_ev_numpy_sum(dev, n)), (double)n);
    sd = sqrt(var);
}

// One measured event (metrics.rs's `Event`): the integer fields in output order, the float
// fields in FLOAT_FIELDS' order, the category.
struct SC_Event {
    sc_i64 ints[8];
    double f[14];
    int category;
};

// The event's peak (np.argmax of rel_seas: the first NaN, else the first maximum), its
// categories and duration per category (metrics.rs: days where the threshold is above the
// mean only).
template <typename T>
SC_DEVICE sc_i64 sc_ev_peak_and_categories(const SeriesView<T>& v, sc_i64 s, sc_i64 e, SC_Event& ev) {
    sc_i64 peak = 0;
    double best = 0.0;
    bool seen_nan = false, has_top = false;
    double top = 0.0;
    sc_i64 dur[4] = {0, 0, 0, 0};
    for (sc_i64 i = s; i <= e; ++i) {
        double t, seas, th;
        v.at(i, t, seas, th);
        const double r = sc_sub(t, seas);
        if (!seen_nan) {
            if (sc_ev_isnan(r)) {
                peak = i - s;
                seen_nan = true;
            } else if (i == s || r > best) {
                if (i != s) peak = i - s;
                best = r;
            }
        }
        const double width = sc_sub(th, seas);
        if (width > 0.0) {
            const double norm = sc_div(sc_sub(t, th), width);
            const double cat = floor(sc_add(1.0, norm));
            if (cat >= 1.0) dur[(int)(cat < 4.0 ? cat : 4.0) - 1] += 1;
            if (!has_top || norm > top) top = norm;
            has_top = true;
        }
    }
    int category = 0;
    if (has_top) {
        const double c = floor(sc_add(1.0, top));
        if (c >= 1.0) category = (int)(c < 4.0 ? c : 4.0);
    }
    for (int k = 0; k < 4; ++k) ev.ints[4 + k] = dur[k];
    ev.category = category;
    return peak;
}

// Measure the event of days s..=e of a series of n_days days (metrics.rs's `measure_at`, its
// special cases included: rates at the series' ends).
template <typename T>
SC_DEVICE void sc_ev_measure(const SeriesView<T>& v, sc_i64 s, sc_i64 e, sc_i64 n_days, double f, SC_Event& ev) {
    const sc_i64 n = e - s + 1;
    const sc_i64 peak = sc_ev_peak_and_categories(v, s, e, ev);
    double mean[3], sd[3], sum[3], at_peak[3];
    for (int w = 0; w < 3; ++w) sc_ev_stats(v, s, n, w, mean[w], sd[w], sum[w]);
    double t, seas, th;
    v.at(s + peak, t, seas, th);
    at_peak[0] = sc_sub(t, seas);
    at_peak[1] = sc_sub(t, th);
    at_peak[2] = t;
    v.at(s, t, seas, th);
    const double first = sc_sub(t, seas);
    v.at(e, t, seas, th);
    const double last = sc_sub(t, seas);
    double rate_onset, rate_decline;
    if (s > 0) {
        v.at(s - 1, t, seas, th);
        const double start = sc_mul(0.5, sc_sub(sc_add(first, t), seas));
        rate_onset = sc_div(sc_sub(at_peak[0], start), sc_add((double)peak, 0.5));
    } else if (peak == 0) {
        rate_onset = sc_div(sc_sub(at_peak[0], first), 1.0);
    } else {
        rate_onset = sc_div(sc_sub(at_peak[0], first), (double)peak);
    }
    if (e < n_days - 1) {
        v.at(e + 1, t, seas, th);
        const double end = sc_mul(0.5, sc_sub(sc_add(last, t), seas));
        rate_decline = sc_div(sc_sub(at_peak[0], end), sc_add((double)(e - s - peak), 0.5));
    } else if (peak == n_days - 1) {
        rate_decline = sc_div(sc_sub(at_peak[0], last), 1.0);
    } else {
        rate_decline = sc_div(sc_sub(at_peak[0], last), (double)(e - s - peak));
    }
    ev.ints[0] = s;
    ev.ints[1] = e;
    ev.ints[2] = s + peak;
    ev.ints[3] = n;
    for (int w = 0; w < 3; ++w) {
        ev.f[4 * w + 0] = sc_mul(f, at_peak[w]);
        ev.f[4 * w + 1] = sc_mul(f, mean[w]);
        ev.f[4 * w + 2] = sd[w];
        ev.f[4 * w + 3] = sc_mul(f, sum[w]);
    }
    ev.f[12] = rate_onset;
    ev.f[13] = rate_decline;
}

// `np.max([a, b])` as summary.rs computes it: NaN if either is; of two equal zeros, +0 (Rust's
// f64::max).
SC_DEVICE double sc_ev_np_max(double a, double b) {
    if (sc_ev_isnan(a) || sc_ev_isnan(b)) return sc_ev_nan();
    if (a > b) return a;
    if (b > a) return b;
    return (sc_double_bits(a) >> 63) ? b : a;
}

// Add event `ev` to the cell's per-year statistics (summary.rs's `block_average` loop; `acc`
// points at the cell's first value, rows `stride` apart).
SC_DEVICE void sc_ev_accumulate(const EventParams& p, double* acc, sc_i64 stride, const SC_Event& ev) {
    const sc_i64 ny = p.n_years;
    const sc_i64 y0 = p.year[ev.ints[0]], y1 = p.year[ev.ints[1]];
#define SC_EV_AT(stat, y) acc[((stat) * ny + (y)) * stride]
    SC_EV_AT(0, y0) = sc_add(SC_EV_AT(0, y0), 1.0);
    SC_EV_AT(1, y0) = sc_add(SC_EV_AT(1, y0), (double)ev.ints[3]);
    SC_EV_AT(2, y0) = sc_add(SC_EV_AT(2, y0), ev.f[0]);
    SC_EV_AT(3, y0) = sc_ev_np_max(SC_EV_AT(3, y0), ev.f[0]);
    for (int k = 0; k < 13; ++k) SC_EV_AT(4 + k, y0) = sc_add(SC_EV_AT(4 + k, y0), ev.f[1 + k]);
    sc_i64 last = y0;
    if (y0 == y1) {
        SC_EV_AT(17, y0) = sc_add(SC_EV_AT(17, y0), (double)ev.ints[3]);
    } else {
        for (sc_i64 i = ev.ints[0]; i <= ev.ints[1]; ++i) {
            last = p.year[i];
            SC_EV_AT(17, last) = sc_add(SC_EV_AT(17, last), 1.0);
        }
    }
    SC_EV_AT(18, last) = sc_add(SC_EV_AT(18, last), ev.f[3]);
#undef SC_EV_AT
}

// The cell's statistics once its events are added: means over the year's events (NaN in a
// year without), stored as float32.
SC_DEVICE void sc_ev_finish(const EventParams& p, const double* acc, float* out, sc_i64 stride) {
    const sc_i64 ny = p.n_years;
    for (sc_i64 y = 0; y < ny; ++y) {
        double count = acc[y * stride];
        const double div = count == 0.0 ? sc_ev_nan() : count;
        for (int stat = 0; stat < SC_EV_STATS; ++stat) {
            double x = acc[(stat * ny + y) * stride];
            if (stat >= 1 && stat < 17 && stat != 3) x = sc_div(x, div);
            out[(stat * ny + y) * stride] = (float)x;
        }
        if (sc_ev_isnan(sc_div(acc[(2 * ny + y) * stride], div))) out[(3 * ny + y) * stride] = (float)sc_ev_nan();
    }
}

// Write event `ev` at index `k` of the event columns.
SC_DEVICE void sc_ev_store(const EventParams& p, sc_i64 k, const SC_Event& ev) {
    for (int j = 0; j < 8; ++j) p.ints[j * p.n_events + k] = (int)ev.ints[j];
    for (int j = 0; j < 14; ++j) p.floats[j * p.n_events + k] = ev.f[j];
    p.category[k] = (signed char)ev.category;
}

// A closed (joined) event of the cell: pass 0 counts it, pass 1 measures, stores and adds it.
template <typename T>
SC_DEVICE void sc_ev_emit(const EventParams& p, const SeriesView<T>& v, sc_i64 s, sc_i64 e, sc_i64& k) {
    if (p.pass == 1) {
        SC_Event ev;
        sc_ev_measure(v, s, e, p.n_days, p.cold ? -1.0 : 1.0, ev);
        sc_ev_store(p, k, ev);
        sc_ev_accumulate(p, p.acc + v.cell, p.n_cells, ev);
    }
    ++k;
}

// A run of exceeding days s..=e of at least the minimum duration: joined to the pending event
// across a gap of at most max_gap days, else the pending event is closed and this one pends.
template <typename T>
SC_DEVICE void sc_ev_run(const EventParams& p, const SeriesView<T>& v, sc_i64 s, sc_i64 e, sc_i64& ps, sc_i64& pe,
                         sc_i64& k) {
    if (ps >= 0 && p.max_gap >= 0 && s - pe - 1 <= p.max_gap) {
        pe = e;
        return;
    }
    if (ps >= 0) sc_ev_emit(p, v, ps, pe, k);
    ps = s;
    pe = e;
}

template <typename T>
SC_DEVICE void sc_events(const EventParams& p) {
    const sc_i64 cell = (sc_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= p.n_cells) return;
    SeriesView<T> v = {(const T*)p.pool, p.table, p.slot_of_day, p.doy, p.mean, p.thresh,
                       p.pool_stride, p.clim_stride, cell, p.cold ? -1.0 : 1.0};
    const sc_i64 stride = p.n_cells, n_stats = SC_EV_STATS * p.n_years;
    // a cell without any mean (land) has no events, and NaN statistics
    bool valid = false;
    for (sc_i64 d = 0; d < p.n_doy && !valid; ++d) valid = !sc_ev_isnan(p.mean[d * p.clim_stride + cell]);
    if (!valid) {
        if (p.pass == 0) p.counts[cell] = 0;
        else
            for (sc_i64 r = 0; r < n_stats; ++r) p.summary[r * stride + cell] = (float)sc_ev_nan();
        return;
    }
    if (p.pass == 1)
        for (sc_i64 r = 0; r < n_stats; ++r) p.acc[r * stride + cell] = 0.0;
    sc_i64 k = p.pass == 1 ? p.offsets[cell] : 0;
    sc_i64 start = -1, ps = -1, pe = -1;
    for (sc_i64 i = 0; i < p.n_days; ++i) {
        double t, seas, th;
        v.at(i, t, seas, th);
        if (t > th) {
            if (start < 0) start = i;
        } else if (start >= 0) {
            if (i - start >= p.min_duration) sc_ev_run(p, v, start, i - 1, ps, pe, k);
            start = -1;
        }
    }
    if (start >= 0 && p.n_days - start >= p.min_duration) sc_ev_run(p, v, start, p.n_days - 1, ps, pe, k);
    if (ps >= 0) sc_ev_emit(p, v, ps, pe, k);
    if (p.pass == 0) p.counts[cell] = (int)k;
    else sc_ev_finish(p, p.acc + cell, p.summary + cell, stride);
}

// Entry points, one per pool type. A run-time compiler builds only the one it needs
// (-DSC_SELECT -DSC_WANT_<name>); hipcc builds them all.
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_events_f32)
extern "C" __global__ void __launch_bounds__(SC_EV_BLOCK) sstclim_events_f32(const EventParams p) { sc_events<float>(p); }
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_events_f64)
extern "C" __global__ void __launch_bounds__(SC_EV_BLOCK) sstclim_events_f64(const EventParams p) { sc_events<double>(p); }
#endif
#if !defined(SC_SELECT) || defined(SC_WANT_sstclim_events_i16)
extern "C" __global__ void __launch_bounds__(SC_EV_BLOCK) sstclim_events_i16(const EventParams p) { sc_events<short>(p); }
#endif
