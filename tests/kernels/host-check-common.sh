# Sourced by the host checks (tests/kernels/*-host-check.sh): moves to the repository root and
# makes a temporary folder `$tmp` (removed on exit). The checks include a kernel source and its
# headers from kernels/ (-Ikernels) after tests/kernels/host_cuda_shims.h, so
# kernels/sstclim_port.h takes its CUDA branch (no HIP macros are defined) with the built-ins as
# host C++.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
