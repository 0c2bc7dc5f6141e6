#!/usr/bin/env bash
# Installs what sstclim needs on a fresh Debian/Ubuntu machine, skipping what is already there,
# and, if cargo is missing, a Rust toolchain through rustup. Sourced:
#
#   . scripts/install-deps.sh build   what building the default binary and running the demo
#                                     need (scripts/demo.sh, scripts/bench/cpu-peers.sh): a C
#                                     toolchain, pkg-config, libnetcdf (with HDF5), and OpenMPI
#                                     and libclang for the `mpi` feature (on by default: the
#                                     `mpi` crate's build runs mpicc and bindgen)
#   . scripts/install-deps.sh         all of that and what the tests need (scripts/test.sh):
#                                     mpirun for the MPI tests, mount for the full-disk test,
#                                     python3 for the sort-network check, and HIP's compiler and
#                                     runtime for the `hip` feature's compile checks (no AMD GPU
#                                     needed)
set -euo pipefail

packages=(build-essential pkg-config libnetcdf-dev libopenmpi-dev openmpi-bin libclang-dev)
if [ "${1:-all}" != build ]; then
    packages+=(util-linux python3 hipcc libamdhip64-dev)
fi
# rustup's installer is fetched with curl when there is no cargo yet
if ! command -v cargo >/dev/null 2>&1 && [ ! -f "$HOME/.cargo/env" ]; then
    packages+=(ca-certificates curl)
fi
missing=()
for pkg in "${packages[@]}"; do
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
