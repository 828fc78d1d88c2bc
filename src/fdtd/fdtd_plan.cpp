// The FDTD update kernels' plan: the policy mapping, bounds and tile, checked against the device.
#include "core/planned_tile.hpp"
#include "fdtd/fdtd.hpp"

namespace kstencil {

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
    launch.column_start = static_cast<int>(cells.lo[slow]);
    launch.column_length = static_cast<int>(cells.extent(slow));
  } else {
    plan.mapping = resolve_mapping(config.layout, config.iterate, limits.gpu);
    launch.lower = to_policy_order(plan.mapping, cells.lo);
    launch.upper = to_policy_order(plan.mapping, cells.hi);
    tile = to_policy_order(plan.mapping, config.tile);
  }
  const PlannedTile planned =
      plan_tile(plan.mapping, config.launch_bounds, launch.lower, launch.upper, tile, limits);
  launch.tile = planned.tile;
  plan.problem = planned.problem;
  return plan;
}

std::string FdtdPlan::describe() const {
  if (config.variant == FdtdVariant::cell) return mapping.describe();
  return config.layout == Layout::right ? "policy (k,j), columns along x"
                                        : "policy (i,j), columns along z";
}

}  // namespace kstencil
