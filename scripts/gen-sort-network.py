#!/usr/bin/env python3
"""Write Batcher's odd-even merge sort networks into kernels/sort_network.inc (the climatology
kernel's) and src/engine/sort_net.rs.

The kernel sorts each staged group (up to 32 samples) in registers with a fixed network, and
the heads of a target's groups (11, 12 or 32 of them, one per kernel instantiation) before each
walk: every compare-exchange must name its two registers at compile time, so each network is
spelled out as a list of pairs (the loops that generate it have bounds the CUDA unroller does
not resolve). Batcher's network has 191 compare-exchanges for 32 keys, against 240 for the
bitonic network it replaces; 38 for 11 and 42 for 12. This script regenerates the lists between
the markers and checks the networks sort (random inputs here; `tests` in
src/engine/gpu/mod.rs check them again from the header's text).

The CPU engine sorts its groups with the same networks for 8, 16 and 32 keys, written out as
straight-line Rust (`src/engine/sort_net.rs`, whose tests check them again): a loop that
builds a network at run time does not unroll, and then every compare-exchange goes through
the stack behind a branch.

    scripts/gen-sort-network.py            # rewrite both in place
    scripts/gen-sort-network.py --check    # exit 1 if either differs
"""
import random
import re
import sys
from pathlib import Path

SIZES = (11, 12, 32)  # group heads for kernels l11 and l12; 32: a group's samples, and l32's heads
RUST_SIZES = (8, 16, 32)  # the CPU engine's groups, padded to the next size
ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels" / "sort_network.inc"
RUST = ROOT / "src" / "engine" / "sort_net.rs"
BEGIN = "// BEGIN sort network (scripts/gen-sort-network.py)"
END = "// END sort network"


def batcher(n):
    """Knuth's iterative form of Batcher's odd-even merge sort (TAOCP 5.3.4, Algorithm M)."""
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            j = k % p
            while j + k < n:
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
                j += 2 * k
            k //= 2
        p *= 2
    return pairs


def check(pairs, n, trials=20000):
    rng = random.Random(7)
    for _ in range(trials):
        x = [rng.randint(0, 6) for _ in range(n)]
        for a, b in pairs:
            if x[a] > x[b]:
                x[a], x[b] = x[b], x[a]
        assert x == sorted(x), "network does not sort"


def render(networks):
    lines = [BEGIN]
    for n, pairs in networks:
        lines.append(f"// {n} keys, {len(pairs)} compare-exchanges; SC_CX(a, b) orders keys a and b (a < b)")
        lines.append(f"#define SC_SORT{n}_NETWORK(SC_CX) \\")
        per = 8
        for i in range(0, len(pairs), per):
            chunk = " ".join(f"SC_CX({a}, {b})" for a, b in pairs[i : i + per])
            lines.append(f"    {chunk}" + (" \\" if i + per < len(pairs) else ""))
    lines.append(END)
    return "\n".join(lines)


def render_rust(networks):
    lines = [
        "//! Batcher's odd-even merge sort networks for the CPU engine's groups, written out as",
        "//! straight-line code by scripts/gen-sort-network.py (do not edit; CI checks the two agree).",
        "//!",
        "//! Every compare-exchange names its two keys by constant index, so the keys stay in registers",
        "//! or fixed stack slots and each exchange is a comparison and two conditional moves.",
        "",
        "/// Order keys `a` < `b` of `k`.",
        "#[inline(always)]",
        "fn cx<const N: usize>(k: &mut [i64; N], a: usize, b: usize) {",
        "    let (x, y) = (k[a], k[b]);",
        "    k[a] = x.min(y);",
        "    k[b] = x.max(y);",
        "}",
    ]
    for n, pairs in networks:
        lines += [
            "",
            f"/// Ascending sort of {n} keys: {len(pairs)} compare-exchanges.",
            "#[inline(always)]",
            f"pub fn sort{n}(k: &mut [i64; {n}]) {{",
        ]
        lines += [f"    cx(k, {a}, {b});" for a, b in pairs]
        lines.append("}")
    lines += [
        "",
        "#[cfg(test)]",
        "mod tests {",
        "    use super::*;",
        "",
        "    /// Every 0/1 input (the 0-1 principle: a network that sorts them sorts everything) for 8",
        "    /// and 16 keys; random inputs with many ties for 32.",
        "    #[test]",
        "    fn the_networks_sort() {",
        "        for bits in 0u32..1 << 16 {",
        "            let mut k16 = [0i64; 16];",
        "            for (i, k) in k16.iter_mut().enumerate() {",
        "                *k = (bits >> i & 1) as i64;",
        "            }",
        "            let mut k8 = [0i64; 8];",
        "            k8.copy_from_slice(&k16[..8]);",
        "            sort16(&mut k16);",
        "            sort8(&mut k8);",
        "            assert!(k16.windows(2).all(|w| w[0] <= w[1]), \"{bits:#x}: {k16:?}\");",
        "            assert!(k8.windows(2).all(|w| w[0] <= w[1]), \"{bits:#x}: {k8:?}\");",
        "            assert_eq!(k16.iter().sum::<i64>(), bits.count_ones() as i64);",
        "        }",
        "        let mut state = 0x9e37_79b9_7f4a_7c15u64;",
        "        for _ in 0..20_000 {",
        "            let mut k = [0i64; 32];",
        "            for x in k.iter_mut() {",
        "                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);",
        "                // ties, and the extremes the engine pads with",
        "                *x = match state & 7 {",
        "                    0 => i64::MIN,",
        "                    1 => i64::MAX,",
        "                    _ => (state >> 61) as i64 - 4,",
        "                };",
        "            }",
        "            let mut want = k;",
        "            want.sort_unstable();",
        "            sort32(&mut k);",
        "            assert_eq!(k, want);",
        "        }",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def main():
    networks = [(n, batcher(n)) for n in sorted(set(SIZES) | set(RUST_SIZES))]
    for n, pairs in networks:
        check(pairs, n)
    text = KERNEL.read_text()
    block = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not block.search(text):
        sys.exit(f"{KERNEL}: markers not found")
    new = block.sub(lambda _: render([(n, p) for n, p in networks if n in SIZES]), text)
    rust = render_rust([(n, p) for n, p in networks if n in RUST_SIZES])
    if "--check" in sys.argv[1:]:
        if new != text:
            sys.exit(f"{KERNEL}: the sort network differs from {Path(__file__).name}'s")
        if not RUST.exists() or RUST.read_text() != rust:
            sys.exit(f"{RUST}: the sort networks differ from {Path(__file__).name}'s")
        sys.exit(0)
    KERNEL.write_text(new)
    RUST.write_text(rust)
    print(", ".join(f"{len(p)} compare-exchanges for {n} keys" for n, p in networks) + f" written to {KERNEL} and {RUST}")


if __name__ == "__main__":
    main()
