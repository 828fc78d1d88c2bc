// The Jacobi kernel's norm strategies, per-backend default configuration and plan.
#include <stdexcept>

#include "core/planned_tile.hpp"
#include "jacobi/jacobi.hpp"

namespace kstencil {

NormStrategy parse_norm_strategy(const std::string& word) {
  if (word == "reduce") return NormStrategy::reduce;
  if (word == "reduce-range") return NormStrategy::reduce_range;
  if (word == "atomic") return NormStrategy::atomic;
  if (word == "kokkos-kernels") return NormStrategy::kokkos_kernels;
  throw std::invalid_argument("unknown norm strategy " + word);
}

std::string to_string(NormStrategy strategy) {
  switch (strategy) {
    case NormStrategy::reduce:
      return "reduce";
    case NormStrategy::reduce_range:
      return "reduce-range";
    case NormStrategy::atomic:
      return "atomic";
    case NormStrategy::kokkos_kernels:
      return "kokkos-kernels";
  }
  return "?";
}

JacobiKernelConfig default_jacobi_kernel(const ExecLimits& limits, const Grid& grid, Layout layout,
                                         IterOrder iterate, NormStrategy norm) {
  JacobiKernelConfig config;
  config.layout = layout;
  config.iterate = iterate;
  config.norm = norm;
  if (limits.gpu) {
    int contiguous = 0;
    if (layout == Layout::right)
      for (int d = 2; d >= 0; --d)
        if (!is_collapsed(grid, d)) {
          contiguous = d;
          break;
        }
    // Kokkos 3.4 launches an MDRange reduction on as many blocks as a tile has threads, so the
    // reduce norm wants large tiles: 256 with launch bounds 256 was fastest, 128 equal without a
    // norm (docs/PERFORMANCE.md, Jacobi).
    const int threads = norm == NormStrategy::reduce ? 256 : 128;
    config.tile = {1, 1, 1};
    config.tile[contiguous] = threads;
    config.launch_bounds = threads;
  } else if (is_collapsed(grid, 1) && is_collapsed(grid, 2)) {
    config.tile = {65536, 1, 1};
  }
  return config;
}

JacobiPlan plan_jacobi(const JacobiKernelConfig& config, const Grid& grid,
                       const ExecLimits& limits) {
  return plan_jacobi(config, grid, grid.to_local(owned_interior(grid)), limits);
}

JacobiPlan plan_jacobi(const JacobiKernelConfig& config, const Grid& grid, const Box& box,
                       const ExecLimits& limits) {
  JacobiPlan plan;
  plan.config = config;
  plan.points = grid.points;
  // A 1D grid is contiguous along x in either layout: "auto" iterates it as layout left does.
  const bool one_d = is_collapsed(grid, 1) && is_collapsed(grid, 2);
  plan.mapping = resolve_mapping(
      one_d && config.iterate == IterOrder::automatic ? Layout::left : config.layout,
      config.iterate, limits.gpu);
  plan.lower = to_policy_order(plan.mapping, box.lo);
  plan.upper = to_policy_order(plan.mapping, box.hi);
  for (int d = 0; d < 3; ++d) {
    plan.box_lo[d] = static_cast<int>(box.lo[d]);
    plan.box_extent[d] = static_cast<int>(box.hi[d] - box.lo[d]);
  }
  plan.box_size = box.size();
  const auto tile = to_policy_order(plan.mapping, config.tile);
  const PlannedTile planned =
      plan_tile(plan.mapping, config.launch_bounds, plan.lower, plan.upper, tile, limits);
  plan.tile = planned.tile;
  plan.problem = planned.problem;
  return plan;
}

}  // namespace kstencil
