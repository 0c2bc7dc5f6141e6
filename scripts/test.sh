#!/usr/bin/env bash
# Set-up command 2: install what is missing and run every test (unit, decoding against the
# netCDF4-python fixtures, end-to-end on generated data, bad input, and the 360x181 check;
# GPU engine tests run on every backend present and say SKIPPED for the others), then the
# compile checks of the GPU code: the kernel with Debian's hipcc for gfx906 and the crate with
# the `hip` feature (the CUDA backend is always built: CUDA is loaded at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install-deps.sh
# the test hooks (SSTCLIM_TEST_*, feature test-hooks) and the benchmark subcommands (feature
# bench) are compiled in for the tests; the product's default build has neither
# (--workspace: xtask's own tests too, the source checks below; sstclim is built once)
cargo test --release --locked --workspace --all-targets --features bench,test-hooks
echo "== formatting (rustfmt.toml)" >&2
cargo fmt --all -- --check
echo "== clippy on every feature CI builds, warnings denied (allowed lints: Cargo.toml [workspace.lints])" >&2
cargo clippy --locked --workspace --all-targets --features bench,test-hooks,hip -- -D warnings
echo "== the API docs build without a warning (broken intra-doc links)" >&2
RUSTDOCFLAGS='-D warnings' cargo doc --locked --no-deps --features bench,test-hooks
echo "== the kernel's sort network is the one scripts/gen-sort-network.py writes" >&2
python3 scripts/gen-sort-network.py --check
echo "== kernels/climatology.hip with hipcc for gfx906" >&2
hipcc --genco --offload-arch=gfx906 -O3 -ffp-contract=off -Rpass-analysis=kernel-resource-usage \
    -o target/climatology-gfx906.hsaco kernels/climatology.hip 2> target/climatology-gfx906.usage \
    || { cat target/climatology-gfx906.usage >&2; exit 1; }
echo "== the 11- and 12-group kernels fit gfx906's registers (no scratch spills)" >&2
# (printed through fd 2, not `tee /dev/stderr`: reopening that path truncates a log file that
# stderr was redirected to, and the test output before it was lost)
scratch=$(awk '/Function Name:/ { name = $(NF-1) } /ScratchSize/ { print name, $(NF-1) }' target/climatology-gfx906.usage)
printf '%s\n' "$scratch" >&2
printf '%s\n' "$scratch" | awk '$1 ~ /_l1[12]$/ && $2 != 0 { bad = 1 } END { exit bad }'
echo "== kernels/bench/baselines.hip with hipcc for gfx906" >&2
hipcc --genco --offload-arch=gfx906 -O3 -ffp-contract=off -I kernels -o target/baselines-gfx906.hsaco kernels/bench/baselines.hip
echo "== kernels/events.hip with hipcc for gfx906" >&2
hipcc --genco --offload-arch=gfx906 -O3 -ffp-contract=off -o target/events-gfx906.hsaco kernels/events.hip
echo "== every kernel instantiation as CUDA device code (clang, no CUDA toolkit needed)" >&2
scripts/cuda-syntax-check.sh
echo "== kernels/bench/baselines.hip emulated on the host against a naive reference" >&2
tests/kernels/baselines-host-check.sh
echo "== the climatology kernel's order-statistic search emulated on the host against a sorted union" >&2
tests/kernels/walk-host-check.sh
echo "== the whole climatology kernel emulated on the host against a naive reference" >&2
tests/kernels/kernel-host-check.sh
echo "== the event kernel emulated on the host against the CPU scan, bit for bit" >&2
tests/kernels/events-host-check.sh
echo "== cargo build --features hip (kernels for gfx906 and gfx90a)" >&2
cargo build --release --locked --features hip
echo "== CF outputs: the IOOS compliance checker (cf:1.8) clean and the xarray/cf_xarray round trip on every layout" >&2
# (a venv under target/, so that CI's Python stays as it is; tests/python/cf_outputs.py says what
# is checked; a minute or two on 2 cores)
[ -x target/venv-cf/bin/python ] || python3 -m venv target/venv-cf
target/venv-cf/bin/pip install -q -r tests/python/requirements.txt
target/venv-cf/bin/python tests/python/cf_outputs.py target/release/sstclim "$(mktemp -d)"
echo "== the product's build (no bench feature) offers the user's subcommands only" >&2
# (the binary just built: the hip feature changes no subcommand, and a build of its own would
# cost CI another few minutes)
help=$(target/release/sstclim --help)
for sub in run generate compare demo; do
    grep -qE "^  $sub " <<<"$help" || { printf '%s\n' "$help" >&2; echo "no '$sub' subcommand" >&2; exit 1; }
done
if grep -q 'bench-' <<<"$help" || target/release/sstclim bench-locate --help > /dev/null 2>&1; then
    printf '%s\n' "$help" >&2
    echo "the product's build has benchmark subcommands" >&2
    exit 1
fi
echo "== layers: no upward import, no import circle (xtask layers, imports read with syn)" >&2
cargo run --release --locked -q -p xtask -- layers src
echo "== every integration test module (tests/it/) is named in docs/testing.md, and every one it names exists" >&2
python3 scripts/check-test-modules.py --self-test
python3 scripts/check-test-modules.py
echo "== every link in the README, CHANGELOG and docs (docs/README.md, the index, too) points to a file that exists" >&2
python3 scripts/check-links.py README.md CHANGELOG.md docs/*.md bench-results/README.md bench-results/runs/*/README.md kernels/README.md slurm/README.md
echo "== bench-results: every run indexed and cited, under 1 MB, no archives, no machine paths in its scripts" >&2
python3 scripts/check-bench-results.py
echo "== functions a person can hold in their head: none over 100 lines (generated ones aside)" >&2
cargo run --release --locked -q -p xtask -- fn-length src
