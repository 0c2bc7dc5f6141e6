#!/usr/bin/env bash
# Issue 32's scale run: the real jobs at every GPU count the node has (1, 2, 4, 8 ranks under
# mpirun, one GPU each: sstclim's binding gives node-local rank r the GPU r), with per-rank
# stage times, end-to-end wall times (outputs on the node's disk), outputs checked bitwise
# equal across rank counts, and speedup/efficiency per stage (scripts/bench/scale-plot.py makes
# the PNG; run it where matplotlib is, e.g. on the dev VM after the results come back).
#
# Jobs (each at every rank count, alternating order over repeats):
#   year    `run` full year 1991-2020 of the global int16 deflated dataset (OISST-like deflate
#           4 + shuffle), mean + P10 + P90, hobday366, --smooth 31, per-doy float64 outputs
#   events  `events --baseline 1983-2012` over 1982-2022 (marineHeatWaves' defaults)
#
# Usage: bash scripts/bench/scale-gpus.sh [--bin PATH] [--work DIR] [--out DIR]
#            [--ranks "1 2 4 8"] [--grid 1440x721] [--jobs "year events"] [--repeat N]
#            [--backend cuda|hip|cpu]
# Without GPUs (--backend cpu) the same script checks its own plumbing on a small --grid.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${SSTCLIM:-$PWD/target/release/sstclim}
work=/tmp/sstclim-scale-gpus
out=""
ranks=""
grid=1440x721
jobs="year events"
repeat=2
backend=""
while (($#)); do
    case "$1" in
        --bin) bin="$2"; shift ;;
        --work) work="$2"; shift ;;
        --out) out="$2"; shift ;;
        --ranks) ranks="$2"; shift ;;
        --grid) grid="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        --repeat) repeat="$2"; shift ;;
        --backend) backend="$2"; shift ;;
        *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
    esac
    shift
done
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ -z "$backend" ]]; then
    if ((ngpu > 0)); then backend=cuda; else backend=cpu; fi
fi
if [[ -z "$ranks" ]]; then
    ranks=""
    for n in 1 2 4 8; do
        if ((n == 1 || n <= ngpu)); then ranks="$ranks $n"; fi
    done
fi
stamp=$(date -u +%Y-%m-%d)
out=${out:-bench-results/runs/$stamp-$(hostname -s)-scale-gpus}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HDF5_USE_FILE_LOCKING=FALSE SSTCLIM_RATES=none
data=$work/data
mkdir -p "$out" "$work"
summary=$out/summary.txt
log() { echo "== $*" | tee -a "$summary" >&2; }

{
    echo "date_utc: $(date -u +%FT%TZ)"
    echo "host: $(hostname -s)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cores: $(nproc)"
    echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "gpus: $ngpu"
    nvidia-smi -L 2>/dev/null
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "mpi: $(mpirun --version 2>/dev/null | head -1)"
    echo "sstclim: $("$bin" --version)"
    echo "backend: $backend"
    echo "ranks: $ranks (repeat $repeat)"
    echo "jobs: $jobs"
    echo "grid: $grid"
} >"$out/machine.txt"

if [[ ! -d "$data" ]]; then
    log "generating $data ($grid, 1982-2022, every day, int16, deflate 4 + shuffle)"
    /usr/bin/time -f "generate wall %e s" "$bin" -q generate --output "$data" --grid "$grid" --years 1982-2022 \
        --doys 1-366 --storage i16 --deflate 4 --shuffle 2>>"$summary" || { log "generate failed"; exit 1; }
fi
log "dataset: $(find "$data" -name '*.nc' | wc -l) files, $(du -sh "$data" | cut -f1); warming the page cache"
find "$data" -name '*.nc' -print0 | xargs -0 -P 8 cat >/dev/null
log "read+inflate floor (one process, all cores)"
"$bin" bench-read --input "$data" --baseline 1982-2022 --doys 1-366 --half-window 0 --repeats 2 --inflate \
    >"$out/read-floor.txt" 2>&1
tail -2 "$out/read-floor.txt" | tee -a "$summary"

# one run: job $1 at $2 ranks, repeat $3
one() {
    local job=$1 np=$2 i=$3 name="$1-np$2-run$3"
    local dest=$work/out-$job-np$np
    local mpi=(mpirun --oversubscribe --bind-to none -np "$np" -x LD_LIBRARY_PATH -x HDF5_USE_FILE_LOCKING -x SSTCLIM_RATES)
    local cmd
    case $job in
        year) cmd=("$bin" -q run --input "$data" --output "$dest" --baseline 1991-2020 --doys 1-366 --percentile 10,90
                --calendar hobday366 --smooth 31 --backend "$backend" --overwrite --timing-json "$out/$name.json") ;;
        events) cmd=("$bin" events --input "$data" --output "$dest" --years 1982-2022 --baseline 1983-2012 --overwrite
                --progress json) ;;
    esac
    ((np > 1)) || mpi=()
    printf '%s\n' "${mpi[*]} ${cmd[*]}" >"$out/$name.cmd"
    local t0 t1 rc
    t0=$(date +%s.%N)
    "${mpi[@]}" "${cmd[@]}" >"$out/$name.out" 2>"$out/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    log "$name rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s"
}

for i in $(seq 1 "$repeat"); do
    order=$ranks
    ((i % 2 == 0)) && order=$(echo "$ranks" | tr ' ' '\n' | tac | tr '\n' ' ')
    for job in $jobs; do
        for np in $order; do one "$job" "$np" "$i"; done
    done
done

log "outputs equal across rank counts (bitwise)"
for job in $jobs; do
    first=""
    for np in $ranks; do
        if [[ -z "$first" ]]; then first=$np; continue; fi
        if [[ $job == year ]]; then
            "$bin" compare --tolerance 0 "$work/out-$job-np$first" "$work/out-$job-np$np" \
                >"$out/compare-$job-np$first-np$np.txt" 2>&1
        else
            python3 scripts/bench/h5equal.py "$work/out-$job-np$first" "$work/out-$job-np$np" \
                >"$out/compare-$job-np$first-np$np.txt" 2>&1
        fi
        log "$job np$first vs np$np: rc=$? $(tail -1 "$out/compare-$job-np$first-np$np.txt")"
    done
done
# scale-plot.py reads np*-run*.json: the year job's per-rank timing files
for f in "$out"/year-np*-run*.json; do [[ -e $f ]] && cp "$f" "$out/${f##*/year-}"; done
log "results in $out (plot: python3 scripts/bench/scale-plot.py $out)"
