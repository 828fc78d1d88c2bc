// The backend's default Laplacian kernel and parameters. Every choice here was measured in
// alternating runs against its alternatives; the figures are in docs/PERFORMANCE.md.
#include <algorithm>

#include "arch/streams.hpp"
#include "core/line_tile.hpp"
#include "laplacian/plan.hpp"

namespace kstencil {

namespace {

// Blocked tile on GPUs: 128 threads along the contiguous axis, or as many as its lanes fill with
// the rest along y (128 threads over 64 points left half of them idle), down to 16 (a warp then
// spans two rows: rows of 64 floats in quads are 16 lanes, and 32 left half idle) or to a warp.
std::array<std::int64_t, 3> gpu_blocked_tile(const Box& box, const AxisRoles& a,
                                             const bool zero_row_ends, const int m_contiguous,
                                             const bool whole_warps) {
  const auto range = blocked_contiguous_range(box.lo[a.contiguous], box.hi[a.contiguous],
                                              zero_row_ends, m_contiguous);
  const Index lanes = range[1] - range[0];
  std::int64_t along_contiguous = whole_warps ? 32 : 16;
  while (along_contiguous < 128 && along_contiguous < lanes) along_contiguous *= 2;
  std::array<std::int64_t, 3> tile{1, 128 / along_contiguous, 1};
  tile[a.contiguous] = along_contiguous;
  return tile;
}

}  // namespace

LaplacianKernelParams resolve_laplacian_params(const LaplacianKernelRequest& request,
                                               const ExecLimits& limits, const Layout layout,
                                               const Grid& grid, const int element_bytes) {
  const AxisRoles a = AxisRoles::of(layout);
  const Box box = grid.to_local(laplacian_update_box(grid));
  LaplacianKernelParams p;
  p.kernel = request.kernel.value_or(limits.gpu ? LaplacianKernel::blocked : LaplacianKernel::line);
  p.iterate = request.iterate;
  p.streaming_stores = request.streaming_stores;
  p.zero_row_ends = request.zero_row_ends;
  std::array<std::int64_t, 3> default_tile{0, 0, 0};  // Kokkos' default
  switch (p.kernel) {
    case LaplacianKernel::mdrange:
      break;
    case LaplacianKernel::blocked: {
      // Register blocks with several blocks per work item along the slowest axis (the rows they
      // share come from the L1), 128 threads per block with launch bounds 128. On GPUs in runs of
      // 16 bytes along the contiguous axis where the rows hold whole runs (float quads, double
      // pairs; else float pairs): a warp then moves 512 bytes per access. Runs take 2 blocks a
      // work item: twice the work items of 4, shorter work groups (docs/PERFORMANCE.md, H100).
      struct Blocks {
        int m, m_slow, per_item;
      };
      const Index contiguous = grid.local_extents()[a.contiguous];
      const int run = !limits.gpu                                             ? 1
                      : element_bytes == 4 && blocked_runs_fit(4, contiguous) ? 4
                      : blocked_runs_fit(2, contiguous)                       ? 2
                                                                              : 1;
      const bool in_runs = run > 1;
      const Blocks blocks = in_runs                   ? Blocks{4, 2, 2}
                            : element_bytes == 8      ? Blocks{8, 1, 3}
                            : layout == Layout::right ? Blocks{4, 2, 3}
                                                      : Blocks{8, 1, 4};
      // An auto m or m_slow beside an explicit one takes the largest default that still fits.
      const int asked_slow = request.m_slow.value_or(0);
      p.m = request.m.value_or(asked_slow > 0
                                   ? std::max(1, std::min(blocks.m, max_block_points / asked_slow))
                                   : blocks.m);
      p.m_slow =
          request.m_slow.value_or(std::max(1, std::min(blocks.m_slow, max_block_points / p.m)));
      p.blocks_per_item = request.blocks_per_item.value_or(blocks.per_item);
      p.launch_bounds = request.launch_bounds.value_or(limits.gpu ? 128 : 0);
      // Parts keep the m_slow + 2 planes a work item reads within the last-level cache.
      p.parts = request.parts.value_or(
          auto_blocked_parts(grid, layout, element_bytes, limits.llc_bytes, p.m, p.m_slow + 2));
      p.m_contiguous = request.m_contiguous.value_or(
          in_runs && blocked_runs_compiled(run, p.m, p.m_slow, p.streaming_stores, element_bytes)
              ? run
              : 1);
      if (limits.gpu)
        default_tile = gpu_blocked_tile(box, a, p.zero_row_ends, p.m_contiguous,
                                        request.whole_warps_along_rows);
      break;
    }
    case LaplacianKernel::line: {
      p.m = request.m.value_or(16);  // rows per work item: one fence per 16 rows
      // Many-core hosts march row blocks through each thread's planes (host_line_tile); fewer
      // threads with AVX2 or AVX-512 update 4 planes per work item instead.
      const bool few_threads = few_core_host(limits);
      p.m_slow =
          request.m_slow.value_or(!limits.gpu && host_simd_lines_compiled() && few_threads ? 4 : 1);
      if (!limits.gpu) {
        const std::array<std::int64_t, 2> tile = host_line_tile(
            box.extent(a.slow), box.extent(1), box.extent(a.contiguous), element_bytes,
            limits.concurrency, few_threads, limits.core_cache_bytes, p.m, p.m_slow);
        default_tile[a.slow] = tile[0];
        default_tile[1] = tile[1];
      }
      break;
    }
  }
  p.m = request.m.value_or(p.m);
  p.m_slow = request.m_slow.value_or(p.m_slow);
  p.m_contiguous = request.m_contiguous.value_or(p.m_contiguous);
  p.blocks_per_item = request.blocks_per_item.value_or(p.blocks_per_item);
  p.parts = request.parts.value_or(p.parts);
  p.launch_bounds = request.launch_bounds.value_or(p.launch_bounds);
  p.prefetch.bytes = request.prefetch.value_or(!line_prefetches(p, limits.gpu) ? 0
                                               : host_simd_lines_compiled()
                                                   ? default_prefetch_bytes
                                                   : default_single_stream_prefetch_bytes);
  p.prefetch.into = request.prefetch_into.value_or(PrefetchInto::l1);
  for (int d = 0; d < 3; ++d) p.tile[d] = request.tile[d] > 0 ? request.tile[d] : default_tile[d];
  return p;
}

}  // namespace kstencil
