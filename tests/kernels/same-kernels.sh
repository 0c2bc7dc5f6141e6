#!/usr/bin/env bash
# Check that the kernels in the work tree compile to the same code as at git revision REF, for
# changes that must leave them as they are (moving code between headers, comments, renames):
#  1. the preprocessed CUDA source of every instantiation scripts/cuda-syntax-check.sh compiles
#     (clang -E with its flags and prelude; line markers and blank lines dropped) is identical;
#  2. the gfx906 code objects that scripts/test.sh builds with hipcc are identical (bytes; where
#     they differ, the disassembly and resource usage say how);
#  3. where NVRTC is at hand (scripts/kernel-sass.sh fetches it), every climatology kernel's
#     sm_90 cubin, generic and for the reference job's launch constants, is identical.
#
#   tests/kernels/same-kernels.sh [REF]      # REF: default HEAD
set -euo pipefail
cd "$(dirname "$0")/../.."
ref=${1:-HEAD}
clang=$(ls /usr/lib/llvm-*/bin/clang++ 2>/dev/null | sort -V | tail -1)
llvm=$(dirname "$clang")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old"
git archive "$ref" kernels | tar -x -C "$tmp/old"
# the syntax check's prelude (what NVRTC declares implicitly)
sed -n "/^cat > \"\$tmp\/prelude.h\" <<'H'$/,/^H$/p" scripts/cuda-syntax-check.sh | sed '1d;$d' > "$tmp/prelude.h"
# as scripts/cuda-syntax-check.sh: the reference job's launch constants
ref_job="-DSC_K_BC=64 -DSC_K_ROWS=32 -DSC_K_RING=11 -DSC_K_NPCT=1 -DSC_K_RING_GLOBAL=1 -DSC_K_HINTS=1
    -DSC_K_POOL_STRIDE=1038240 -DSC_K_GLEN=30 -DSC_K_NL=11 -DSC_K_HOT_LO=24 -DSC_K_HOT_HI=31"
baselines() {  # TREE: the baselines' source (moved to kernels/bench/)
    if [ -f "$1/kernels/bench/baselines.hip" ]; then echo "$1/kernels/bench/baselines.hip"; else echo "$1/kernels/baselines.hip"; fi
}
pp() {  # TREE SOURCE NAME [DEFINES...]
    local tree=$1 src=$2 name=$3
    shift 3
    "$clang" -x cuda --cuda-gpu-arch=sm_80 --cuda-device-only -nocudainc -nocudalib -std=c++17 -O1 \
        -ffp-contract=off -Wno-pass-failed -DSC_SELECT "-DSC_WANT_$name" "$@" -include "$tmp/prelude.h" \
        -I "$tree/kernels" -E -P "$src" | grep -v '^[[:space:]]*$'
}
status=0
same() {  # WHAT OLD_FILE NEW_FILE
    if cmp -s "$2" "$3"; then
        echo "same $1"
    else
        echo "DIFF $1"
        status=1
    fi
}
cases=()
for name in $(grep -o 'SC_WANT_[a-z0-9_]*' kernels/climatology.hip | sed 's/SC_WANT_//' | sort -u); do
    cases+=("climatology.hip $name")
done
for name in $(grep -o 'SC_WANT_[a-z0-9_]*' "$(baselines .)" | sed 's/SC_WANT_//' | sort -u); do
    cases+=("baselines.hip $name")
done
for c in "${cases[@]}"; do
    set -- $c
    for side in old new; do
        tree=$([ $side = old ] && echo "$tmp/old" || echo .)
        src=$([ "$1" = climatology.hip ] && echo "$tree/kernels/climatology.hip" || baselines "$tree")
        pp "$tree" "$src" "$2" > "$tmp/$side.i"
    done
    same "preprocessed $1 $2 ($(wc -l < "$tmp/new.i") lines)" "$tmp/old.i" "$tmp/new.i"
done
for name in sstclim_clim_f32_l11 sstclim_clim_f64_l11 sstclim_clim_i16_l11 sstclim_clim_i16o_l11; do
    pp "$tmp/old" "$tmp/old/kernels/climatology.hip" $name $ref_job > "$tmp/old.i"
    pp . kernels/climatology.hip $name $ref_job > "$tmp/new.i"
    same "preprocessed climatology.hip $name with the reference job's launch constants" "$tmp/old.i" "$tmp/new.i"
done
for side in old new; do
    tree=$([ $side = old ] && echo "$tmp/old" || echo .)
    hipcc --genco --offload-arch=gfx906 -O3 -ffp-contract=off -Rpass-analysis=kernel-resource-usage \
        -o "$tmp/$side.clim.hsaco" "$tree/kernels/climatology.hip" 2> "$tmp/$side.usage"
    hipcc --genco --offload-arch=gfx906 -O3 -ffp-contract=off -I "$tree/kernels" -o "$tmp/$side.base.hsaco" \
        "$(baselines "$tree")"
done
for k in clim base; do
    if ! cmp -s "$tmp/old.$k.hsaco" "$tmp/new.$k.hsaco"; then
        for side in old new; do
            "$llvm/clang-offload-bundler" --unbundle --type=o --targets=hipv4-amdgcn-amd-amdhsa--gfx906 \
                --input="$tmp/$side.$k.hsaco" --output="$tmp/$side.$k.co"
            "$llvm/llvm-objdump" -d --mcpu=gfx906 "$tmp/$side.$k.co" | tail -n +3 > "$tmp/$side.$k.dis"
        done
        same "gfx906 disassembly of $k" "$tmp/old.$k.dis" "$tmp/new.$k.dis"
    fi
    same "gfx906 code object of $k (bytes)" "$tmp/old.$k.hsaco" "$tmp/new.$k.hsaco"
done
remarks() { grep 'remark:' "$1" | sed 's/^[^ ]*: remark: *//'; }
remarks "$tmp/old.usage" > "$tmp/old.remarks"
remarks "$tmp/new.usage" > "$tmp/new.remarks"
same "gfx906 resource usage of climatology ($(grep -c ScratchSize "$tmp/new.remarks") kernels)" \
    "$tmp/old.remarks" "$tmp/new.remarks"
nvrtc=$HOME/.cache/sstclim-cuda-tools/nvidia/cu13/lib/libnvrtc.so.13
if [ -f "$nvrtc" ]; then
    for c in "${cases[@]}"; do
        set -- $c
        [ "$1" = climatology.hip ] || continue
        for defs in "" "$ref_job"; do
            for side in old new; do
                tree=$([ $side = old ] && echo "$tmp/old" || echo .)
                LD_LIBRARY_PATH="$(dirname "$nvrtc")" python3 -c '
import sys; sys.path.insert(0, "scripts"); import kernel_sass
log, cubin = kernel_sass.compile_cubin(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5:])
open(sys.argv[4], "wb").write(cubin)' "$nvrtc" "$tree/kernels/climatology.hip" "$2" "$tmp/$side.cubin" \
                    $(echo $defs | sed 's/-D//g')
            done
            what="sm_90 cubin of $2"
            [ -z "$defs" ] || what="$what with the reference job's launch constants"
            same "$what" "$tmp/old.cubin" "$tmp/new.cubin"
        done
    done
else
    echo "(no NVRTC at $nvrtc: scripts/kernel-sass.sh fetches it; cubins not compared)"
fi
exit $status
