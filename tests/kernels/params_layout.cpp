// params_layout.cpp: the climatology kernel's argument block (`ClimParams`, kernels/params.h) as
// a C++ compiler lays it out, for the unit test in src/engine/gpu/source.rs that compares it
// with the Rust `KernelParams` the backends pass to the launch. Prints `size`, `align`, then
// one line `NAME OFFSET SIZE` per field, and fails if the fields listed here leave a byte of
// the struct uncovered (a field added to params.h but not here). Host and device agree on the
// layout: both are LP64 with natural alignment, and CUDA and HIP keep the host's layout for
// kernel arguments.
//
// Built by the test: g++ -std=c++17 -Ikernels -Itests/kernels tests/kernels/params_layout.cpp
#include <cstddef>
#include <cstdio>

#include "host_cuda_shims.h"

#include "params.h"

struct Field {
    const char* name;
    size_t offset, size;
};
#define SC_FIELD(f) {#f, offsetof(ClimParams, f), sizeof(((ClimParams*)nullptr)->f)}

static const Field fields[] = {
    SC_FIELD(pool),          SC_FIELD(out_values),  SC_FIELD(out_counts),      SC_FIELD(load_start),
    SC_FIELD(loads),         SC_FIELD(target_lists), SC_FIELD(target_nl),      SC_FIELD(group_off),
    SC_FIELD(group_rows),    SC_FIELD(group_first), SC_FIELD(pos_lo),          SC_FIELD(pos_frac),
    SC_FIELD(ring_global),   SC_FIELD(lut),         SC_FIELD(pool_stride),     SC_FIELD(out_cell_stride),
    SC_FIELD(n_cells),       SC_FIELD(out_cell0),   SC_FIELD(n_batch),         SC_FIELD(out_target0),
    SC_FIELD(out_targets),   SC_FIELD(n_pct),       SC_FIELD(max_n),           SC_FIELD(min_samples),
    SC_FIELD(rows),          SC_FIELD(ring),        SC_FIELD(use_hints),       SC_FIELD(pad_),
};

int main() {
    const size_t n = sizeof(fields) / sizeof(fields[0]);
    // every byte of the struct belongs to one listed field
    static unsigned char covered[sizeof(ClimParams)];
    for (size_t i = 0; i < n; ++i)
        for (size_t b = fields[i].offset; b < fields[i].offset + fields[i].size; ++b) ++covered[b];
    for (size_t b = 0; b < sizeof(ClimParams); ++b) {
        if (covered[b] != 1) {
            std::fprintf(stderr, "byte %zu of ClimParams is in %d listed fields, not 1\n", b, covered[b]);
            return 1;
        }
    }
    std::printf("size %zu\nalign %zu\n", sizeof(ClimParams), alignof(ClimParams));
    for (size_t i = 0; i < n; ++i) std::printf("%s %zu %zu\n", fields[i].name, fields[i].offset, fields[i].size);
    return 0;
}
