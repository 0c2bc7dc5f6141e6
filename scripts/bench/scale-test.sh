#!/usr/bin/env bash
# Scale test: the same sstclim job at several MPI rank counts (mpirun --oversubscribe), each
# rank's stage times gathered by rank 0 into one JSON per run, then speedup and efficiency per
# stage plotted as a PNG (scripts/bench/scale-plot.py, matplotlib).
#
# Usage: bash scripts/bench/scale-test.sh [--ranks "1 2 4"] [--grid 360x181] [--backend cpu]
#            [--data DIR] [--work DIR] [--out DIR] [--repeat N] [--mpirun-flags "FLAGS"]
#            [-- more `sstclim run` flags]
#   --data DIR   an existing dataset (sst_{year}_{doy}.nc, 1991-2020, days 147-248) instead of
#                generating one of --grid under --work
#   --backend B  passed to `sstclim run` (cpu; cuda/hip once the GPU engine exists)
#   --out DIR    results (default bench-results/runs/<date>-<host>-scale-<backend>)
#   --repeat N   runs per rank count; the plot uses the fastest (default 1)
#   --mpirun-flags  extra mpirun flags, e.g. "--bind-to none" (OpenMPI binds each rank of a
#                2-rank job to one core by default: on a GPU node give the ranks their share)
# The job is the reference definition (30 years, days 152-243, h = 5, P90 type 5). Inputs are
# read once before the runs so that every run reads from the page cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks="1 2 4"
grid=360x181
backend=cpu
data=""
work=/tmp/sstclim-scale
out=""
repeat=1
mpirun_flags=""
extra=()
while (($#)); do
    case "$1" in
        --ranks) ranks="$2"; shift ;;
        --grid) grid="$2"; shift ;;
        --backend) backend="$2"; shift ;;
        --data) data="$2"; shift ;;
        --work) work="$2"; shift ;;
        --out) out="$2"; shift ;;
        --repeat) repeat="$2"; shift ;;
        --mpirun-flags) mpirun_flags="$2"; shift ;;
        --) shift; extra=("$@"); break ;;
        *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
    esac
    shift
done
host=$(hostname -s)
stamp=$(date -u +%Y-%m-%d)
out="${out:-bench-results/runs/$stamp-$host-scale-$backend}"
bin="${SSTCLIM:-$PWD/target/release/sstclim}"
[[ -n "${SSTCLIM:-}" ]] || cargo build --release --locked
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HDF5_USE_FILE_LOCKING=FALSE
mkdir -p "$out" "$work"
log() { echo "== $*" >&2; }

if [[ -z "$data" ]]; then
    data="$work/d$grid"
    log "dataset $data ($grid, 1991-2020, days 147-248)"
    "$bin" -q generate --output "$data" --grid "$grid" --years 1991-2020 --doys 147-248
fi
log "warming the page cache"
find "$data" -name '*.nc' -print0 | xargs -0 cat >/dev/null

{
    echo "date_utc: $(date -u +%FT%TZ)"
    echo "host: $host"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cores: $(nproc)"
    echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "mpi: $(mpirun --version 2>/dev/null | head -1)"
    echo "sstclim: $("$bin" --version) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo "data: $data ($(du -sh "$data" | cut -f1))"
    echo "backend: $backend"
    echo "ranks: $ranks (repeat $repeat)"
    echo "extra run flags: ${extra[*]}"
    echo "mpirun flags: $mpirun_flags"
} >"$out/machine.txt"

for np in $ranks; do
    for i in $(seq 1 "$repeat"); do
        name="np$np-run$i"
        # shellcheck disable=SC2206
        cmd=(mpirun --oversubscribe $mpirun_flags -np "$np" "$bin" -q run --input "$data" --output "$work/out-np$np"
            --baseline 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --method 5
            --backend "$backend" --overwrite --timing-json "$out/$name.json" "${extra[@]}")
        log "$name: ${cmd[*]}"
        echo "$name load before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
        "${cmd[@]}" >"$out/$name.out" 2>"$out/$name.err"
        echo "$name load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
        printf '%s\n' "${cmd[*]}" >"$out/$name.cmd"
    done
done
log "checking that every rank count gave the same outputs"
first=""
for np in $ranks; do
    if [[ -z "$first" ]]; then first=$np; continue; fi
    "$bin" compare "$work/out-np$first" "$work/out-np$np" >"$out/compare-np$first-np$np.txt"
done
python3 scripts/bench/scale-plot.py "$out"
log "results in $out"
