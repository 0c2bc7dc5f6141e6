#!/bin/bash
# sstclim on N nodes x G GPUs (one MPI rank per GPU), CUDA or HIP. Give the shape on the
# sbatch command line, e.g. 4 nodes of 2 GPUs:
#
#   sbatch --nodes=4 --ntasks-per-node=2 --gpus-per-node=2 --cpus-per-task=16 slurm/sbatch-generic.sh
#
# Without GPUs (`--backend cpu` in JOB_ARGS) leave out --gpus-per-node and set GPUS_PER_NODE to
# the ranks per node. Check what it would run with
# `NODES=4 GPUS_PER_NODE=2 DRY_RUN=1 bash slurm/sbatch-generic.sh`.
#
#SBATCH --job-name=sstclim
#SBATCH --time=01:00:00
#SBATCH --output=sstclim-%j.out
set -euo pipefail

# ---- site settings: edit these -------------------------------------------------------------
MODULES="${MODULES:-}"                       # e.g. "openmpi/4.1.6 cuda/12.4", or "" for none
SSTCLIM="${SSTCLIM:-$HOME/sstclim/target/release/sstclim}"
NODES="${NODES:-${SLURM_JOB_NUM_NODES:-1}}"
GPUS_PER_NODE="${GPUS_PER_NODE:-${SLURM_NTASKS_PER_NODE:-1}}"
CPUS_PER_TASK="${CPUS_PER_TASK:-${SLURM_CPUS_PER_TASK:-1}}"
# --gpus-per-node=G for CUDA/ROCm gres "gpu"; empty when the job has no GPUs
GPU_FLAG="${GPU_FLAG---gpus-per-node=$GPUS_PER_NODE}"

# ---- the job: every argument in one place ---------------------------------------------------
JOB_ARGS=(
    run
    --input '/data/sst/sst_{year}_{doy}.nc'
    --output "${OUTPUT_DIR:-$PWD/clim-${SLURM_JOB_ID:-dry}}"
    --baseline 1991-2020 --doys 152-243 --half-window 5
    --percentile 90 --method 5
    --backend auto
    --timing-json "${TIMING_JSON:-$PWD/timing-${SLURM_JOB_ID:-dry}.json}"
)

# ---- launch ---------------------------------------------------------------------------------
# sstclim binds each rank to a GPU by its node-local rank within the devices the runtime
# exposes (CUDA_/HIP_/ROCR_VISIBLE_DEVICES), so tasks need no per-task GPU binding.
SRUN=(
    srun --nodes="$NODES" --ntasks-per-node="$GPUS_PER_NODE" --cpus-per-task="$CPUS_PER_TASK"
    --cpu-bind=cores ${GPU_FLAG:+"$GPU_FLAG"} --kill-on-bad-exit=1
    "$SSTCLIM" "${JOB_ARGS[@]}"
)
export HDF5_USE_FILE_LOCKING=FALSE

if [[ "${DRY_RUN:-0}" == 1 ]]; then
    [[ -n "$MODULES" ]] && echo "module load $MODULES"
    printf '%q ' "${SRUN[@]}"
    echo
    exit 0
fi
if [[ -n "$MODULES" ]]; then
    module purge
    # shellcheck disable=SC2086
    module load $MODULES
fi
"${SRUN[@]}"
