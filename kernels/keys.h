// keys.h: samples as the kernel orders and computes them. `Keys<T>` maps a value to an unsigned
// key whose integer order is the CPU engine's total order of values (and back); `Compute<S>`
// says what a pool's stored type is computed as (int16 pools: decoded through the pool's table,
// or keyed by their integers where the table keeps their order); `sc_key_value` turns a key
// into its result value and `sc_lerp` interpolates between two of them as the CPU engine does.
#pragma once

#include "sstclim_port.h"

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
