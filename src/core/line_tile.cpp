#include "core/line_tile.hpp"

#include <algorithm>

namespace kstencil {

namespace {

std::array<std::int64_t, 2> many_core_line_tile(const std::int64_t planes_in,
                                                const std::int64_t rows_in,
                                                const std::int64_t contiguous,
                                                const int element_bytes, const int threads,
                                                const std::int64_t core_cache_bytes, const int m) {
  const std::int64_t planes = std::max<std::int64_t>(planes_in, 1);
  const std::int64_t rows = std::max<std::int64_t>(rows_in, 1);
  const std::int64_t items = (rows + m - 1) / m;
  const std::int64_t t = std::max(threads, 1);
  std::int64_t best_chunk = (planes + t - 1) / t, best_items = 1, best_rows_read = -1;
  for (std::int64_t chunks = 1; chunks <= t; ++chunks) {
    if (t % chunks != 0) continue;
    const std::int64_t plane_chunk = (planes + chunks - 1) / chunks;
    const std::int64_t items_per_block = (items + t / chunks - 1) / (t / chunks);
    const std::int64_t block_rows = std::min(items_per_block * m, rows);
    const std::int64_t slab_bytes = 3 * (block_rows + 2) * (contiguous + 2) * element_bytes;
    if (core_cache_bytes <= 0 || 4 * slab_bytes > core_cache_bytes) continue;
    const std::int64_t tiles = ((planes + plane_chunk - 1) / plane_chunk) *
                               ((items + items_per_block - 1) / items_per_block);
    const std::int64_t rows_read = (tiles + t - 1) / t * (block_rows + 2) * (plane_chunk + 2);
    if (best_rows_read < 0 || rows_read < best_rows_read) {
      best_rows_read = rows_read;
      best_chunk = plane_chunk;
      best_items = items_per_block;
    }
  }
  return {best_chunk, best_items};
}

std::array<std::int64_t, 2> few_core_line_tile(const std::int64_t planes, const std::int64_t rows,
                                               const std::int64_t contiguous,
                                               const int element_bytes, const int threads,
                                               const std::int64_t core_cache_bytes, const int m,
                                               const int m_slow) {
  const std::int64_t plane_row_bytes = (m_slow + 2) * (contiguous + 2) * element_bytes;
  const std::int64_t block_rows = core_cache_bytes / 2 / plane_row_bytes - 2;
  const std::int64_t items = std::min<std::int64_t>(block_rows / m, (rows + m - 1) / m);
  if (core_cache_bytes <= 0 || items < 1) return {0, 0};
  const std::int64_t t = std::max(threads, 1);
  return {(planes + t - 1) / t, items};
}

}  // namespace

std::array<std::int64_t, 2> host_line_tile(const std::int64_t planes, const std::int64_t rows,
                                           const std::int64_t contiguous, const int element_bytes,
                                           const int threads, const bool few_threads,
                                           const std::int64_t core_cache_bytes, const int m,
                                           const int m_slow) {
  std::array<std::int64_t, 2> tile =
      few_threads ? m_slow > 1 ? few_core_line_tile(planes, rows, contiguous, element_bytes,
                                                    threads, core_cache_bytes, m, m_slow)
                               : std::array<std::int64_t, 2>{0, 0}
                  : many_core_line_tile(planes, rows, contiguous, element_bytes, threads,
                                        core_cache_bytes, m);
  // The helpers count planes; the tile counts work items of m_slow planes.
  tile[0] = (tile[0] + m_slow - 1) / m_slow;
  return tile;
}

}  // namespace kstencil
