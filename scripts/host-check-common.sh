# Sourced by the host checks (scripts/*-host-check.sh): moves to the repository root, makes a
# temporary folder `$tmp` (removed on exit), and defines `inline_kernel SRC DEST`, which writes
# kernel source SRC with kernels/sstclim_port.h pasted in (its CUDA branch: no HIP macros are
# defined), for a host compiler given scripts/host_cuda_shims.h first.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inline_kernel() {
    sed -e '/#include "sstclim_port.h"/{r kernels/sstclim_port.h' -e 'd}' "$1" | grep -v "#pragma once" > "$2"
}
