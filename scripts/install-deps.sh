#!/usr/bin/env bash
# Installs what building and testing sstclim needs on a fresh Debian/Ubuntu machine, skipping
# what is already there: a C toolchain, pkg-config, libnetcdf (with HDF5), HIP's compiler and
# runtime (for the `hip` feature's compile checks; no AMD GPU needed) and, if cargo is missing,
# a Rust toolchain through rustup. Sourced by scripts/demo.sh and scripts/test.sh.
# OpenMPI and libclang: the `mpi` crate's build (mpicc, bindgen) and mpirun for the MPI tests.
set -euo pipefail

missing=()
for pkg in build-essential pkg-config libnetcdf-dev util-linux libopenmpi-dev openmpi-bin libclang-dev hipcc libamdhip64-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing: ${missing[*]}" >&2
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "installing Rust (rustup, minimal profile)" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >/dev/null
    . "$HOME/.cargo/env"
fi
