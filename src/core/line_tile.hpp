#pragma once
// The host line kernels' tile (the Laplacian's and Jacobi's rows): which work items of rows a
// thread sweeps in what order, from the core count and a core's cache.
#include <array>
#include <cstdint>

namespace kstencil {

// Work items of `m` rows (y) of `m_slow` planes, over `planes` planes (the slowest axis) of `rows`
// rows of `contiguous` points (`element_bytes` each): the tile {planes, work items of rows} that
// the threads sweep, a 0 entry Kokkos' default. Few threads (few_core_host) with several planes
// a work item: each thread a chunk of planes, swept in blocks of rows whose m_slow + 2 planes fit
// half a core's cache, so the planes beside a block come from that cache when the next block reads
// them. Many threads: each thread marches a block of rows through its chunk of planes, the rows of
// the three planes it works on within a quarter of its cache; over the splits of the threads into
// plane chunks by row blocks the one whose busiest thread reads the fewest rows. Kokkos' tile
// where nothing fits (or the cache is unknown: core_cache_bytes 0).
std::array<std::int64_t, 2> host_line_tile(std::int64_t planes, std::int64_t rows,
                                           std::int64_t contiguous, int element_bytes, int threads,
                                           bool few_threads, std::int64_t core_cache_bytes, int m,
                                           int m_slow);

}  // namespace kstencil
