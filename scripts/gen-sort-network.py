#!/usr/bin/env python3
"""Write Batcher's odd-even merge sort networks into kernels/climatology.hip.

The kernel sorts each staged group (up to 32 samples) in registers with a fixed network, and
the heads of a target's groups (11, 12 or 32 of them, one per kernel instantiation) before each
walk: every compare-exchange must name its two registers at compile time, so each network is
spelled out as a list of pairs (the loops that generate it have bounds the CUDA unroller does
not resolve). Batcher's network has 191 compare-exchanges for 32 keys, against 240 for the
bitonic network it replaces; 38 for 11 and 42 for 12. This script regenerates the lists between
the markers and checks the networks sort (random inputs here; `tests` in
src/engine/gpu/mod.rs check them again from the kernel text).

    scripts/gen-sort-network.py            # rewrite the list in place
    scripts/gen-sort-network.py --check    # exit 1 if the list in the kernel differs
"""
import random
import re
import sys
from pathlib import Path

SIZES = (11, 12, 32)  # group heads for kernels l11 and l12; 32: a group's samples, and l32's heads
KERNEL = Path(__file__).resolve().parent.parent / "kernels" / "climatology.hip"
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


def main():
    networks = [(n, batcher(n)) for n in SIZES]
    for n, pairs in networks:
        check(pairs, n)
    text = KERNEL.read_text()
    block = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not block.search(text):
        sys.exit(f"{KERNEL}: markers not found")
    new = block.sub(lambda _: render(networks), text)
    if "--check" in sys.argv[1:]:
        sys.exit(0 if new == text else f"{KERNEL}: the sort network differs from {Path(__file__).name}'s")
    KERNEL.write_text(new)
    print(", ".join(f"{len(p)} compare-exchanges for {n} keys" for n, p in networks) + f" written to {KERNEL}")


if __name__ == "__main__":
    main()
