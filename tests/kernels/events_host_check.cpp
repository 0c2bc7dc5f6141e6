// Host emulation of kernels/events.hip, for machines without a GPU: the kernel source is
// compiled as plain C++ with the CUDA built-ins replaced by host equivalents
// (host_cuda_shims.h), and every (block, thread) is run in turn. That is exact for this kernel:
// no thread reads another's data and none waits at a barrier.
//
// The band and what to find come from files a Rust test writes (src/events/gpu/host_check.rs),
// which compares what this writes with the CPU scan bit for bit:
//   events_host_check DIR
// reads DIR/meta.txt (`type n_cells n_days n_doy n_years n_slots n_kinds`, then per kind
// `min_duration max_gap cold`), pool.bin, table.bin (int16 pools), slot.bin (int64 per day),
// doy.bin and year.bin (uint16 per day), mean.bin and thresh<k>.bin (float64 [doy][cell]), and
// writes per kind counts<k>.bin (int32 per cell), ints<k>.bin ([8][event] int32),
// floats<k>.bin ([14][event] float64), category<k>.bin (int8 per event) and summary<k>.bin
// ([19 * n_years][cell] float32). Pass 1's offsets are the exclusive scan of pass 0's counts,
// as the host side computes them.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "host_cuda_shims.h"

#include "events.hip"

typedef void (*Kernel)(const EventParams);

static void launch(Kernel k, sc_i64 n_cells, const EventParams& p) {
    blockDim.x = SC_EV_BLOCK;
    const unsigned grid = (unsigned)((n_cells + SC_EV_BLOCK - 1) / SC_EV_BLOCK);
    for (unsigned x = 0; x < grid; ++x)
        for (unsigned t = 0; t < SC_EV_BLOCK; ++t) {
            blockIdx.x = x;
            threadIdx.x = t;
            k(p);
        }
}

template <typename T>
static std::vector<T> load(const std::string& path) {
    std::vector<T> v;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        std::fprintf(stderr, "cannot open %s\n", path.c_str());
        std::exit(2);
    }
    std::fseek(f, 0, SEEK_END);
    const long bytes = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    v.resize((size_t)bytes / sizeof(T));
    if (!v.empty() && std::fread(v.data(), sizeof(T), v.size(), f) != v.size()) std::exit(2);
    std::fclose(f);
    return v;
}

template <typename T>
static void save(const std::string& path, const std::vector<T>& v) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || (!v.empty() && std::fwrite(v.data(), sizeof(T), v.size(), f) != v.size())) std::exit(3);
    std::fclose(f);
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: events_host_check DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    FILE* meta = std::fopen((dir + "/meta.txt").c_str(), "r");
    char type[8];
    long long n_cells, n_days, n_doy, n_years, n_slots, n_kinds;
    if (!meta || std::fscanf(meta, "%7s %lld %lld %lld %lld %lld %lld", type, &n_cells, &n_days, &n_doy, &n_years,
                             &n_slots, &n_kinds) != 7)
        return 2;
    const std::vector<char> pool = load<char>(dir + "/pool.bin");
    const std::vector<double> table = std::strcmp(type, "i16") == 0 ? load<double>(dir + "/table.bin") : std::vector<double>();
    const std::vector<sc_i64> slot = load<sc_i64>(dir + "/slot.bin");
    const std::vector<unsigned short> doy = load<unsigned short>(dir + "/doy.bin");
    const std::vector<unsigned short> year = load<unsigned short>(dir + "/year.bin");
    const std::vector<double> mean = load<double>(dir + "/mean.bin");
    Kernel kernel = std::strcmp(type, "f32") == 0   ? sstclim_events_f32
                    : std::strcmp(type, "f64") == 0 ? sstclim_events_f64
                                                    : sstclim_events_i16;
    for (long long k = 0; k < n_kinds; ++k) {
        long long min_duration, max_gap, cold;
        if (std::fscanf(meta, "%lld %lld %lld", &min_duration, &max_gap, &cold) != 3) return 2;
        const std::string K = std::to_string(k);
        const std::vector<double> thresh = load<double>(dir + "/thresh" + K + ".bin");
        std::vector<int> counts((size_t)n_cells, -1);
        std::vector<sc_i64> offsets((size_t)n_cells, 0);
        std::vector<double> acc((size_t)(SC_EV_STATS * n_years * n_cells), 12345.0);
        std::vector<float> summary(acc.size(), -1.0f);
        EventParams p;
        std::memset(&p, 0, sizeof p);
        p.pool = pool.data();
        p.table = table.data();
        p.slot_of_day = slot.data();
        p.doy = doy.data();
        p.year = year.data();
        p.mean = mean.data();
        p.thresh = thresh.data();
        p.counts = counts.data();
        p.offsets = offsets.data();
        p.acc = acc.data();
        p.summary = summary.data();
        p.pool_stride = p.clim_stride = p.n_cells = n_cells;
        p.n_days = n_days;
        p.n_doy = n_doy;
        p.n_years = n_years;
        p.min_duration = min_duration;
        p.max_gap = max_gap;
        p.cold = cold;
        p.pass = 0;
        launch(kernel, n_cells, p);
        sc_i64 total = 0;
        for (long long c = 0; c < n_cells; ++c) {
            offsets[(size_t)c] = total;
            total += counts[(size_t)c];
        }
        std::vector<int> ints((size_t)(8 * total), -7);
        std::vector<double> floats((size_t)(14 * total), -7.0);
        std::vector<signed char> category((size_t)total, -7);
        p.ints = ints.data();
        p.floats = floats.data();
        p.category = category.data();
        p.n_events = total;
        p.pass = 1;
        launch(kernel, n_cells, p);
        save(dir + "/counts" + K + ".bin", counts);
        save(dir + "/ints" + K + ".bin", ints);
        save(dir + "/floats" + K + ".bin", floats);
        save(dir + "/category" + K + ".bin", category);
        save(dir + "/summary" + K + ".bin", summary);
    }
    std::fclose(meta);
    return 0;
}
