// The FDTD update kernels' plan: the policy mapping, bounds and tile, checked against the device.
#include <algorithm>

#include "arch/streams.hpp"
#include "core/planned_tile.hpp"
#include "fdtd/fdtd.hpp"

namespace kstencil {

namespace {

// The line variant's tile on hosts (planes, rows): each thread one chunk of planes, swept in
// blocks of rows whose lines of one plane (six fields, two coefficient arrays in arrays mode) and
// the two fields the next plane reads again fit half of its core's own cache (with the rows'
// prefetches such blocks beat whole planes from the L3 on 2 and on 16 cores: docs/PERFORMANCE.md).
// Blocks of equal size; Kokkos' default where the caches are unknown.
std::array<std::int64_t, 2> fdtd_line_tile(const std::int64_t planes, const std::int64_t rows,
                                           const std::int64_t length, const MediaMode media,
                                           const int element_bytes, const ExecLimits& limits) {
  if (limits.core_cache_bytes <= 0 || planes < 1 || rows < 1) return {0, 0};
  const std::int64_t lines = (media == MediaMode::arrays ? 8 : 6) + 2;
  const std::int64_t threads = std::max(limits.concurrency, 1);
  const std::int64_t plane_chunk = (planes + threads - 1) / threads;
  std::int64_t block =
      limits.core_cache_bytes / 2 / (lines * std::max<std::int64_t>(length, 1) * element_bytes);
  block = std::clamp<std::int64_t>(block, 1, rows);
  // Fewer plane chunks than threads: split the rows further so that every thread has a tile.
  const std::int64_t chunks = (planes + plane_chunk - 1) / plane_chunk;
  if (chunks < threads) block = std::min(block, std::max<std::int64_t>(rows * chunks / threads, 1));
  const std::int64_t blocks = (rows + block - 1) / block;
  return {plane_chunk, (rows + blocks - 1) / blocks};
}

}  // namespace

bool fdtd_line_prefetches(const FdtdKernelConfig& config, const bool gpu) {
  return fdtd_rows(config.variant) && !gpu && host_prefetch_compiled();
}

Box owned_cells(const FdtdProblem& problem, const Grid& nodes) {
  return nodes.to_local(nodes.owned.intersect(Box{{0, 0, 0}, problem.cells}));
}

FdtdPlan plan_fdtd(const FdtdKernelConfig& config, const FdtdProblem& problem,
                   const ExecLimits& limits) {
  return plan_fdtd(config, problem, Box{{0, 0, 0}, problem.cells}, limits);
}

FdtdPlan plan_fdtd(const FdtdKernelConfig& config, const FdtdProblem& problem, const Box& cells,
                   const ExecLimits& limits) {
  FdtdPlan plan;
  plan.config = config;
  plan.cells = problem.cells;
  FdtdLaunch& launch = plan.launch;
  std::array<std::int64_t, 3> tile;
  if (config.variant == FdtdVariant::column) {
    // Policy (contiguous index, j, 0), Iterate::Left, as Mapping{} gives; the slowest axis is the
    // loop in each work item.
    const int contiguous = config.layout == Layout::right ? 2 : 0;
    const int slow = 2 - contiguous;
    launch.lower = {cells.lo[contiguous], cells.lo[1], 0};
    launch.upper = {cells.hi[contiguous], cells.hi[1], 1};
    tile = {config.tile[contiguous], config.tile[1], 1};
    launch.loop_start = static_cast<int>(cells.lo[slow]);
    launch.loop_length = static_cast<int>(cells.extent(slow));
  } else if (fdtd_rows(config.variant)) {
    // Policy (plane along the slowest axis, j, 0), Iterate::Right; the contiguous axis is the
    // loop in each work item.
    const int contiguous = config.layout == Layout::right ? 2 : 0;
    const int slow = 2 - contiguous;
    plan.mapping.iterate_right = true;
    launch.lower = {cells.lo[slow], cells.lo[1], 0};
    launch.upper = {cells.hi[slow], cells.hi[1], 1};
    tile = {config.tile[slow], config.tile[1], 1};
    if (!limits.gpu) {
      const auto fitted =
          fdtd_line_tile(cells.extent(slow), cells.extent(1), cells.extent(contiguous),
                         problem.media.mode, config.element_bytes, limits);
      for (int d = 0; d < 2; ++d)
        if (tile[d] == 0) tile[d] = fitted[d];
    }
    launch.loop_start = static_cast<int>(cells.lo[contiguous]);
    launch.loop_length = static_cast<int>(cells.extent(contiguous));
  } else {
    plan.mapping = resolve_mapping(config.layout, config.iterate, limits.gpu);
    Box range = cells;
    if (config.variant == FdtdVariant::pairs) {
      // The pairs of cells (2 m, 2 m + 1) that hold a cell of the range: pairs start at even local
      // indices, where the rows' aligned pairs of values are; none where the range holds no cell
      // (a rank holding one node along the axis), whose odd start would still round to a pair.
      const int contiguous = config.layout == Layout::right ? 2 : 0;
      range.lo[contiguous] = cells.lo[contiguous] / 2;
      range.hi[contiguous] =
          cells.extent(contiguous) > 0 ? (cells.hi[contiguous] + 1) / 2 : range.lo[contiguous];
      launch.loop_start = static_cast<int>(cells.lo[contiguous]);
      launch.loop_length = static_cast<int>(cells.extent(contiguous));
    }
    launch.lower = to_policy_order(plan.mapping, range.lo);
    launch.upper = to_policy_order(plan.mapping, range.hi);
    tile = to_policy_order(plan.mapping, config.tile);
  }
  plan.row_alignment = limits.gpu ? std::max(128 / std::max(config.element_bytes, 1), 1) : 1;
  if (config.variant == FdtdVariant::pairs && plan.row_alignment % 2 != 0)
    plan.row_alignment *= 2;  // rows of whole pairs
  const PlannedTile planned =
      plan_tile(plan.mapping, config.launch_bounds, launch.lower, launch.upper, tile, limits);
  launch.tile = planned.tile;
  plan.problem = planned.problem;
  return plan;
}

Index3 FdtdPlan::allocated_extents(const Index3& extents) const {
  Index3 out = extents;
  const int contiguous = config.layout == Layout::right ? 2 : 0;
  const Index a = std::max(row_alignment, 1);
  out[contiguous] = (extents[contiguous] + a - 1) / a * a;
  return out;
}

std::string FdtdPlan::describe() const {
  const bool right = config.layout == Layout::right;
  switch (config.variant) {
    case FdtdVariant::cell:
      return mapping.describe();
    case FdtdVariant::pairs:
      return mapping.describe() + ", pairs along " + (right ? "z" : "x");
    case FdtdVariant::column:
      return right ? "policy (k,j), columns along x" : "policy (i,j), columns along z";
    case FdtdVariant::line:
      return right ? "policy (i,j), Iterate::Right, rows along z"
                   : "policy (k,j), Iterate::Right, rows along x";
    case FdtdVariant::fused:
      return right ? "tiles of (i,j), rows along z, H then E in one sweep"
                   : "tiles of (k,j), rows along x, H then E in one sweep";
  }
  return "?";
}

std::array<std::int64_t, 3> FdtdPlan::tile_per_axis() const {
  const int contiguous = config.layout == Layout::right ? 2 : 0;
  const int slow = 2 - contiguous;
  std::array<std::int64_t, 3> tile{1, launch.tile[1], 1};
  switch (config.variant) {
    case FdtdVariant::cell:
    case FdtdVariant::pairs:
      return to_axis_order(mapping, launch.tile);
    case FdtdVariant::column:
      tile[contiguous] = launch.tile[0];
      break;
    case FdtdVariant::line:
    case FdtdVariant::fused:
      tile[slow] = launch.tile[0];
      break;
  }
  return tile;
}

}  // namespace kstencil
