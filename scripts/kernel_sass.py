#!/usr/bin/env python3
"""Compile one climatology kernel as the CUDA backend does and report its machine code.

Without a GPU: NVRTC (the same library the backend loads at run time) and nvdisasm come from
NVIDIA's Python wheels, which scripts/kernel-sass.sh fetches once. The kernel is compiled
with the backend's options (src/engine/gpu/cuda/nvrtc.rs) and the launch constants of a job (by
default those `sstclim bench-kernel` logs for the reference float32 job), and this prints:
registers and spills (ptxas), the number of SASS instructions, every loop's size and
instruction mix, and the most registers live in each stretch of the code. That is enough to
see what an edit does to a walk step or to the register peak before spending device time;
the timings still come from the H200.

    scripts/kernel_sass.py NVRTC_LIB NVDISASM KERNEL_FILE NAME [DEFINE ...]
"""
import collections
import ctypes
import os
import re
import subprocess
import sys
import tempfile

REFERENCE_F32 = ("SC_K_BC=64 SC_K_ROWS=32 SC_K_RING=11 SC_K_NPCT=1 SC_K_RING_GLOBAL=1 SC_K_HINTS=1 "
                 "SC_K_POOL_STRIDE=1038240 SC_K_GLEN=30 SC_K_HOT_LO=24 SC_K_HOT_HI=31 SC_K_NL=11").split()


def compile_cubin(lib_path, src_path, name, defines, arch="sm_90"):
    lib = ctypes.CDLL(lib_path)
    src = open(src_path).read()
    # the headers beside the kernel, given to NVRTC by the names it includes them as (the
    # backend pastes the same headers into one text, src/engine/gpu/source.rs: same code)
    folder = os.path.dirname(src_path)
    files = sorted(f for f in os.listdir(folder) if f.endswith((".h", ".inc")))
    prog = ctypes.c_void_p()
    heads = (ctypes.c_char_p * len(files))(*[open(os.path.join(folder, f)).read().encode() for f in files])
    names = (ctypes.c_char_p * len(files))(*[f.encode() for f in files])
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), os.path.basename(src_path).encode(), len(files),
                                  heads, names) == 0
    opts = [f"--gpu-architecture={arch}", "--fmad=false", "--prec-div=true", "--ftz=false", "--std=c++17",
            "-DSC_SELECT", f"-DSC_WANT_{name}", "--ptxas-options=-v"] + [f"-D{d}" for d in defines]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit(f"NVRTC failed ({rc}):\n{log.value.decode()}")
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return log.value.decode(), cubin.raw


def parse(disasm):
    """(address, instruction text, live registers) of every instruction, and label addresses."""
    ins, labels, pending = [], {}, []
    for line in disasm.splitlines():
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        for label in pending:
            labels[label] = len(ins)
        pending = []
        live = re.search(r"//\s*\|\s*(\d+)", line)
        ins.append((addr, m.group(2).strip(), int(live.group(1)) if live else 0))
    return ins, labels


def opcode(text):
    words = text.split()
    op = words[1] if words[0].startswith("@") else words[0]
    return op.split(".")[0]


def main():
    lib, nvdisasm, src, name = sys.argv[1:5]
    defines = sys.argv[5:] or REFERENCE_F32
    log, cubin = compile_cubin(lib, src, name, defines)
    for line in log.splitlines():
        if "registers" in line or "spill" in line:
            print(line.replace("ptxas info    : ", "").replace("ptxas         . ", "").strip())
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        disasm = subprocess.run([nvdisasm, "-plr", "-lrm", "count", "-c", f.name], check=True,
                                capture_output=True, text=True).stdout
    if os.environ.get("SASS_DUMP"):  # the annotated listing, for reading
        with open(os.environ["SASS_DUMP"], "w") as out:
            out.write(disasm)
    ins, labels = parse(disasm)
    print(f"{len(ins)} SASS instructions")
    for i, (_, text, _) in enumerate(ins):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", text)
        if m and labels.get(m.group(1), len(ins)) < i:
            start = labels[m.group(1)]
            mix = collections.Counter(opcode(t) for _, t, _ in ins[start:i + 1])
            if i + 1 - start <= 400:  # the loops inside the kernel's outer ones
                print(f"loop at {start}-{i}: {i + 1 - start} instructions: " +
                      " ".join(f"{k}:{v}" for k, v in mix.most_common(8)))
    width = 100
    peaks = [max(live for _, _, live in ins[s:s + width]) for s in range(0, len(ins), width)]
    print(f"most registers live in each {width} instructions: " + " ".join(map(str, peaks)))


if __name__ == "__main__":
    main()
