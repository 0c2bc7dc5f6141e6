#!/bin/bash
# sstclim on the reference deployment: 2 nodes x 4 AMD DCU Z100L (Hygon, gfx906) = 8 MPI ranks,
# one rank per DCU. Submit with `sbatch slurm/sbatch-2x4-dcu.sh`; check what it would run with
# `DRY_RUN=1 bash slurm/sbatch-2x4-dcu.sh` (prints the resolved srun command, runs nothing).
#
#SBATCH --job-name=sstclim
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --gres=dcu:4
#SBATCH --exclusive
#SBATCH --time=00:30:00
#SBATCH --output=sstclim-%j.out
set -euo pipefail

# ---- site settings: edit these -------------------------------------------------------------
# Modules providing the MPI the binary was built against and the DTK/ROCm runtime.
MODULES="${MODULES:-compiler/devtoolset/7.3.1 mpi/hpcx/2.11.0/gcc-7.3.1 compiler/dtk/23.04}"
# The sstclim binary, built with the HIP backend: `cargo build --release --features hip`
# (add `netcdf-static` to carry it to nodes without NetCDF).
SSTCLIM="${SSTCLIM:-$HOME/sstclim/target/release/sstclim}"
# Slurm's name for the DCU generic resource and the devices per node.
GRES_NAME="${GRES_NAME:-dcu}"
DEVICES_PER_NODE="${DEVICES_PER_NODE:-4}"
NODES="${SLURM_JOB_NUM_NODES:-2}"
CPUS_PER_TASK="${SLURM_CPUS_PER_TASK:-8}"

# ---- the job: every argument in one place ---------------------------------------------------
JOB_ARGS=(
    run
    --input '/public/data/sst/sst_{year}_{doy}.nc'
    --output "${OUTPUT_DIR:-$PWD/clim-${SLURM_JOB_ID:-dry}}"
    --baseline 1991-2020 --doys 152-243 --half-window 5
    --percentile 90 --method 5
    --backend hip
    --timing-json "${TIMING_JSON:-$PWD/timing-${SLURM_JOB_ID:-dry}.json}"
)

# ---- launch ---------------------------------------------------------------------------------
# One rank per DCU. Every rank sees the node's DCUs and sstclim picks its own from its
# node-local rank (MPI shared-memory split) within HIP_VISIBLE_DEVICES; with --cpu-bind=cores
# each rank's worker threads stay on its own cores.
SRUN=(
    srun --nodes="$NODES" --ntasks-per-node="$DEVICES_PER_NODE" --cpus-per-task="$CPUS_PER_TASK"
    --cpu-bind=cores --gres="$GRES_NAME:$DEVICES_PER_NODE" --kill-on-bad-exit=1
    "$SSTCLIM" "${JOB_ARGS[@]}"
)
# Slurm's gres plugin may already list the devices (ROCR_/CUDA_VISIBLE_DEVICES); otherwise all.
if [[ -z "${HIP_VISIBLE_DEVICES:-}${ROCR_VISIBLE_DEVICES:-}${CUDA_VISIBLE_DEVICES:-}" ]]; then
    export HIP_VISIBLE_DEVICES="$(seq -s, 0 $((DEVICES_PER_NODE - 1)))"
fi
# Read-only access to shared input: HDF5 file locks only cost metadata traffic on Lustre.
export HDF5_USE_FILE_LOCKING=FALSE

if [[ "${DRY_RUN:-0}" == 1 ]]; then
    echo "module load $MODULES"
    echo "HIP_VISIBLE_DEVICES=${HIP_VISIBLE_DEVICES:-} ROCR_VISIBLE_DEVICES=${ROCR_VISIBLE_DEVICES:-}" \
        "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-} HDF5_USE_FILE_LOCKING=$HDF5_USE_FILE_LOCKING"
    printf '%q ' "${SRUN[@]}"
    echo
    exit 0
fi
module purge
# shellcheck disable=SC2086
module load $MODULES
"${SRUN[@]}"
