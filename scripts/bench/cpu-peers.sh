#!/usr/bin/env bash
# CPU peers benchmark (issue 6): sstclim against CDO, xclim and numpy on this machine.
#
# On one generated dataset (360x181 grid, 1991-2020, days 147..248, float64 with NaN fill,
# one file per day) computes the reference job (target days 152..243, 11-day window, mean and
# P90 Hyndman-Fan type 5) with
#   a. sstclim run --backend cpu (median of --reps runs; plus one --calendar hobday366 run used
#      for the like-for-like check of CDO),
#   b. CDO: mergetime of the per-day files, ydrunmin/ydrunmax/ydrunmean,11, then ydrunpctl,90,11
#      exact (--percentile hazen, CDO_PCTL_NBINS=660 = 2 x 330 samples) and with default settings,
#   c. xclim percentile_doy(window=11, alpha=beta=0.5) on a noleap axis with dask
#      (scripts/bench/peers_xclim.py),
#   d. numpy nanmean / nanpercentile(method='hazen') (scripts/bench/peers_numpy.py),
# each under /usr/bin/time -v (wall time, peak RSS) with the load average recorded before it;
# then max abs differences from sstclim (scripts/bench/peers_compare.py) and the report, JSON and
# charts (scripts/bench/peers_report.py) in bench-results/runs/<date>-<host>-cpu-peers/.
#
# Usage: bash scripts/bench/cpu-peers.sh [--work DIR] [--reps N]   (default /tmp/sstclim-peers, 3)
# Installs cdo (apt-get) and xclim, dask, xarray, netCDF4, matplotlib (pip) when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=/tmp/sstclim-peers
reps=3
while (($#)); do
    case "$1" in
        --work) work="$2"; shift ;;
        --reps) reps="$2"; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "== $(date -u +%H:%M:%S) $*" >&2; }
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

# --- tools -------------------------------------------------------------------------------
. scripts/install-deps.sh build
missing=()
command -v cdo >/dev/null 2>&1 || missing+=(cdo)
[ -x /usr/bin/time ] || missing+=(time)
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! python3 -c "import xclim, dask, xarray, netCDF4, matplotlib, cftime" 2>/dev/null; then
    log "installing xclim dask xarray netCDF4 matplotlib (pip)"
    python3 -m pip install -q xclim dask xarray netCDF4 matplotlib cftime
fi
nice -n 5 cargo build --release --locked
bin="$PWD/target/release/sstclim"

stamp=$(date -u +%Y-%m-%d)
res="bench-results/runs/$stamp-$(hostname -s)-cpu-peers"
raw="$res/raw"
rm -rf "$raw"
mkdir -p "$raw" "$work"
data="$work/data"

# run NAME COMMAND...: the load before it, the command, its output and /usr/bin/time -v
run() {
    local name=$1; shift
    log "$name: $*"
    uptime >"$raw/$name.load"
    printf '%s\n' "$*" >"$raw/$name.cmd"
    /usr/bin/time -v -o "$raw/$name.time" "$@" >"$raw/$name.out" 2>"$raw/$name.err"
}

# --- dataset -------------------------------------------------------------------------------
run generate "$bin" generate -q --output "$data" --grid 360x181 --years 1991-2020 --doys 147-248 --time-dim
cat "$data"/sst_*.nc >/dev/null   # every tool starts from a warm page cache

# --- a. sstclim ----------------------------------------------------------------------------
for i in $(seq 1 "$reps"); do
    run "sstclim-$i" "$bin" run --input "$data" --output "$work/out-sstclim" --baseline 1991-2020 --doys 152-243 \
        --half-window 5 --percentile 90 --method 5 --backend cpu --overwrite --timing-json "$raw/sstclim-$i.json"
done
run sstclim-hobday366 "$bin" run --input "$data" --output "$work/out-sstclim-hobday366" --baseline 1991-2020 \
    --doys 153-243 --calendar hobday366 --half-window 5 --percentile 90 --method 5 --backend cpu --overwrite \
    --timing-json "$raw/sstclim-hobday366.json"

# --- b. CDO ----------------------------------------------------------------------------------
c="$work/cdo"
rm -rf "$c"
mkdir -p "$c"
# (through bash -c so that the recorded command shows the file pattern, not 3060 names)
run cdo-merge bash -c 'exec cdo -O -P 2 mergetime "$0"/sst_*.nc "$1"' "$data" "$c/merged.nc"
run cdo-min cdo -O -P 2 ydrunmin,11 "$c/merged.nc" "$c/min.nc"
run cdo-max cdo -O -P 2 ydrunmax,11 "$c/merged.nc" "$c/max.nc"
run cdo-mean cdo -O -P 2 ydrunmean,11 "$c/merged.nc" "$c/mean.nc"
run cdo-pctl-exact env CDO_PCTL_NBINS=660 cdo -O -P 2 --percentile hazen ydrunpctl,90,11 \
    "$c/merged.nc" "$c/min.nc" "$c/max.nc" "$c/p90-exact.nc"
run cdo-pctl-default cdo -O -P 2 ydrunpctl,90,11 "$c/merged.nc" "$c/min.nc" "$c/max.nc" "$c/p90-default.nc"

# --- c. xclim, d. numpy --------------------------------------------------------------------------
run xclim python3 scripts/bench/peers_xclim.py "$data" "$work/out-xclim" --doys 152-243 --lat-chunk 10
run numpy python3 scripts/bench/peers_numpy.py "$data" "$work/out-numpy" --baseline 1991-2020 --doys 152-243

# --- differences, machine, report ---------------------------------------------------------------
log "comparing"
python3 scripts/bench/peers_compare.py "$work" "$raw/diffs.json" --data "$data" | tee "$raw/diffs.txt"
{
    echo "date_utc: $(date -u +%FT%TZ)"
    echo "host: $(hostname -s)"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "cores: $(nproc)"
    echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "kernel: $(uname -r)"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "libnetcdf: $(nc-config --version 2>/dev/null || echo unknown)"
    echo "sstclim: $("$bin" --version) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo "cdo: $(cdo --version 2>&1 | head -1)"
    echo "python: $(python3 --version 2>&1)"
    python3 -c "import xclim, xarray, dask, numpy, netCDF4, cftime; print('xclim:', xclim.__version__); print('xarray:', xarray.__version__); print('dask:', dask.__version__); print('numpy:', numpy.__version__); print('netCDF4:', netCDF4.__version__); print('cftime:', cftime.__version__)"
} >"$raw/machine.txt"
lscpu >"$raw/lscpu.txt"
python3 scripts/bench/peers_report.py "$res"
log "results in $res"
