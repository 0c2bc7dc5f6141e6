#!/usr/bin/env python3
"""The layer and circle check now lives in xtask (xtask/src/layers.rs: the layer table and the
rules; imports read with a Rust parser, syn). This name runs it, for the places that still call
it; CI runs `cargo run --release --locked -q -p xtask -- layers src`.

    python3 scripts/check-layers.py [src]      # exit 1 and one line per violation
"""
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "src")
cmd = ["cargo", "run", "--release", "--locked", "-q", "-p", "xtask", "--", "layers", src]
sys.exit(subprocess.call(cmd, cwd=root))
