#!/usr/bin/env bash
# Benchmarks of the foundation on this machine (CPU engine), recorded in bench-results/runs/:
#   1. the demo dataset size (144x73) end to end,
#   2. 360x181 x 30 years x 102 days: generation, then `run` with --verify for types 5 and 7,
#   3. with --full: the reference size 1440x721 x 30 x 102 float64 (25 GB): generation, then
#      `run` from a cold page cache (if it can be dropped), with peak RSS from /usr/bin/time.
# Usage: bash scripts/bench/foundation.sh [--full] [--work DIR]   (default DIR /tmp/sstclim-bench)
# Writes bench-results/runs/<date>-<host>-foundation/ (add a README.md by hand before keeping it).
set -euo pipefail
cd "$(dirname "$0")/../.."
full=0
work=/tmp/sstclim-bench
while (($#)); do
    case "$1" in
        --full) full=1 ;;
        --work) work="$2"; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
cargo build --release --locked
bin="$PWD/target/release/sstclim"
host=$(hostname -s)
stamp=$(date -u +%Y-%m-%d)
raw="bench-results/runs/$stamp-$host-foundation"
mkdir -p "$raw" "$work"
log() { echo "== $*" >&2; }

# run NAME COMMAND...: time a command with /usr/bin/time -v, keep its output and resource use
run() {
    local name=$1; shift
    log "$name: $*"
    /usr/bin/time -v -o "$raw/$name.time" "$@" >"$raw/$name.out" 2>"$raw/$name.err"
    printf '%s\n' "$*" >"$raw/$name.cmd"
}
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null && echo cold || echo warm; }

run demo "$bin" demo --dir "$work/demo"
run gen360 "$bin" generate --output "$work/d360" --grid 360x181 --years 1991-2020 --doys 147-248
for m in 5 7; do
    run run360-type$m "$bin" run --input "$work/d360" --output "$work/o360-$m" --baseline 1991-2020 --doys 152-243 \
        --method $m --verify --overwrite --timing-json "$raw/run360-type$m.json"
done
if ((full)); then
    run gen1440 "$bin" generate --output "$work/full" --grid 1440x721 --years 1991-2020 --doys 147-248
    cache=$(drop_caches)
    echo "$cache" >"$raw/run1440.cache"
    run run1440 "$bin" run --input "$work/full" --output "$work/out-full" --baseline 1991-2020 --doys 152-243 \
        --overwrite --timing-json "$raw/run1440.json"
fi
{
    echo "date_utc: $(date -u +%FT%TZ)"
    echo "host: $host"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cores: $(nproc)"
    echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "kernel: $(uname -r)"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "libnetcdf: $(nc-config --version 2>/dev/null || echo unknown)"
    echo "sstclim: $("$bin" --version) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
} >"$raw/machine.txt"
log "raw results in $raw"
python3 scripts/bench/foundation-summary.py "$raw"
