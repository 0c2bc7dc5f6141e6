#!/usr/bin/env bash
# Compile a climatology kernel for sm_90 as the CUDA backend does, on a machine without a GPU
# or CUDA toolkit, and print its registers, spills, SASS size, loops and register peaks
# (scripts/kernel_sass.py). NVRTC 13.0 and nvdisasm are fetched once from NVIDIA's Python
# wheels into ~/.cache/sstclim-cuda-tools (needs network the first time).
#
#   scripts/kernel-sass.sh                                   # reference float32 job, l11
#   scripts/kernel-sass.sh sstclim_clim_f64_l11              # the same constants, float64
#   scripts/kernel-sass.sh sstclim_clim_f32_l11 SC_K_BC=64 ... SC_MIN_BLOCKS=4   # own constants
#   SASS_DUMP=/tmp/k.sass scripts/kernel-sass.sh                  # also keep the annotated listing
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SSTCLIM_CUDA_TOOLS:-$HOME/.cache/sstclim-cuda-tools}
lib=$cache/nvidia/cu13/lib/libnvrtc.so.13
dis=$cache/nvidia/cu13/bin/nvdisasm
if [ ! -f "$lib" ] || [ ! -f "$dis" ]; then
    mkdir -p "$cache/wheels"
    python3 -m pip download -q --no-deps -d "$cache/wheels" "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-nvdisasm"
    for w in "$cache"/wheels/*.whl; do python3 -m zipfile -e "$w" "$cache"; done
    chmod +x "$dis"
fi
name=${1:-sstclim_clim_f32_l11}
shift || true
LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    python3 scripts/kernel_sass.py "$lib" "$dis" kernels/climatology.hip "$name" "$@"
