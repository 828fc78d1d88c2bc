#include "laplacian/plan.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "arch/streams.hpp"
#include "core/planned_tile.hpp"

namespace kstencil {

std::string to_string(LaplacianKernel kernel) {
  switch (kernel) {
    case LaplacianKernel::mdrange:
      return "mdrange";
    case LaplacianKernel::blocked:
      return "blocked";
    case LaplacianKernel::line:
      return "line";
  }
  return "?";
}

std::optional<LaplacianKernel> parse_laplacian_kernel(const std::string& word) {
  for (auto kernel : {LaplacianKernel::mdrange, LaplacianKernel::blocked, LaplacianKernel::line})
    if (word == to_string(kernel)) return kernel;
  return std::nullopt;
}

std::optional<std::string> retired_laplacian_variant(const std::string& word) {
  if (word == "register-blocked") return "renamed: use \"blocked\" (with parts = 1)";
  if (word == "subdomain") return "renamed: use \"blocked\" (parts > 1 or \"auto\")";
  if (word == "march" || word == "scratch")
    return "retired: use \"blocked\", the GPU default (" + word +
           "'s measured figures are in docs/PERFORMANCE.md)";
  return std::nullopt;
}

namespace {

struct Problem {
  std::string key, text, allowed;
};

// What is wrong with the parameters themselves, and the deck key it concerns.
std::optional<Problem> parameter_problem(const LaplacianKernelParams& p, const int element_bytes) {
  const auto one_of = [](int v, std::initializer_list<int> allowed) {
    return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
  };
  const std::string name = to_string(p.kernel);
  if (!one_of(p.m, {1, 2, 4, 8, 16}))
    return Problem{"m", "m must be 1, 2, 4, 8 or 16", "1, 2, 4, 8, 16 or \"auto\""};
  if (!one_of(p.m_slow, {1, 2, 4}))
    return Problem{"m_slow", "m_slow must be 1, 2 or 4", "1, 2, 4 or \"auto\""};
  if (!one_of(p.launch_bounds, {0, 128, 256, 512, 1024}))
    return Problem{"launch_bounds", "launch_bounds must be 0, 128, 256, 512 or 1024",
                   "0, 128, 256, 512, 1024 or \"auto\""};
  if (p.blocks_per_item < 1)
    return Problem{"blocks_per_item", "must be at least 1", "integer >= 1 or \"auto\""};
  if (p.parts < 1) return Problem{"parts", "must be at least 1", "integer >= 1 or \"auto\""};
  if (p.kernel == LaplacianKernel::mdrange && p.m != 1)
    return Problem{"m", "mdrange updates one point per work item", "1 or \"auto\""};
  if (p.kernel == LaplacianKernel::mdrange && p.m_slow != 1)
    return Problem{"m_slow", "mdrange updates one point per work item", "1 or \"auto\""};
  if (p.kernel != LaplacianKernel::blocked && p.blocks_per_item != 1)
    return Problem{"blocks_per_item", name + " has no register blocks (blocked has)",
                   "1 or \"auto\""};
  if (p.kernel != LaplacianKernel::blocked && p.parts != 1)
    return Problem{"parts", name + " runs y in one part (blocked has parts)", "1 or \"auto\""};
  if (p.kernel == LaplacianKernel::blocked && p.m * p.m_slow > max_block_points)
    return Problem{"m_slow",
                   "blocked: m x m_slow must be at most " + std::to_string(max_block_points) +
                       " (larger register blocks spill)",
                   "m_slow <= " + std::to_string(max_block_points) + " / m"};
  if (p.m_contiguous != 1 && p.kernel != LaplacianKernel::blocked)
    return Problem{"m_contiguous",
                   name + " updates one point per work item along the contiguous axis",
                   "1 or \"auto\""};
  if (!one_of(p.m_contiguous, {1, 2, 4}))
    return Problem{"m_contiguous", "m_contiguous must be 1, 2 or 4", "1, 2, 4 or \"auto\""};
  if (p.m_contiguous > 1 &&
      !blocked_runs_compiled(p.m_contiguous, p.m, p.m_slow, p.streaming_stores, element_bytes))
    return Problem{"m_contiguous",
                   "runs along the contiguous axis are compiled with streaming stores: pairs "
                   "(2) for m x m_slow = 4 or 8 in either precision, quads (4) for 4 x 2 in float",
                   "1 or \"auto\" here; 2 for m x m_slow 4 or 8, 4 for 4 x 2 in float, with "
                   "streaming_stores = true"};
  if (p.kernel == LaplacianKernel::line && p.launch_bounds != 0)
    return Problem{"launch_bounds", "line has no launch bounds", "0 or \"auto\""};
  if (p.kernel == LaplacianKernel::line && p.iterate != IterOrder::automatic)
    return Problem{"iterate", "line sweeps lines in its own order", "\"auto\""};
  return std::nullopt;
}

LaplacianLaunch mdrange_launch(const LaplacianPlan& plan) {
  LaplacianLaunch l;
  l.lower = to_policy_order(plan.mapping, plan.box.lo);
  l.upper = to_policy_order(plan.mapping, plan.box.hi);
  return l;
}

LaplacianLaunch blocked_launch(const LaplacianPlan& plan) {
  const LaplacianKernelParams& p = plan.params;
  const AxisRoles& a = plan.axes;
  const Box& box = plan.box;
  LaplacianLaunch l;
  // Parts hold whole blocks of m points along y; every part's items along the slowest axis run in
  // one launch, part after part (a GPU schedules that policy dimension last).
  const Index ny = box.extent(1);
  const Index chunk = ((ny + p.parts - 1) / p.parts + p.m - 1) / p.m * p.m;
  const Index parts = (ny + chunk - 1) / chunk;
  l.y_blocks_per_part = (chunk + p.m - 1) / p.m;
  const Index blocks_along_slow = (box.extent(a.slow) + p.m_slow - 1) / p.m_slow;
  l.slow_items_per_part = (blocks_along_slow + p.blocks_per_item - 1) / p.blocks_per_item;
  Index3 lower{0, 0, 0}, upper{0, 0, 0};
  upper[1] = l.y_blocks_per_part;
  upper[a.slow] = l.slow_items_per_part * parts;
  const auto range = blocked_contiguous_range(box.lo[a.contiguous], box.hi[a.contiguous],
                                              p.zero_row_ends, p.m_contiguous);
  lower[a.contiguous] = range[0];
  upper[a.contiguous] = range[1];
  l.lower = to_policy_order(plan.mapping, lower);
  l.upper = to_policy_order(plan.mapping, upper);
  return l;
}

// Line: a 2D policy over blocks of m_slow planes and blocks of m rows; the tile counts them too.
LaplacianLaunch line_launch(const LaplacianPlan& plan) {
  const LaplacianKernelParams& p = plan.params;
  LaplacianLaunch l;
  l.rank = 2;
  l.upper = {(plan.box.extent(plan.axes.slow) + p.m_slow - 1) / p.m_slow,
             (plan.box.extent(1) + p.m - 1) / p.m, 1};
  return l;
}

using LinePolicy =
    Kokkos::MDRangePolicy<Kokkos::DefaultExecutionSpace,
                          Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                          Kokkos::IndexType<int>>;

// Line's tile (plane blocks, row blocks) as Kokkos runs it: 0 entries take Kokkos' defaults.
std::array<std::int64_t, 3> resolved_line_tile(const LaplacianLaunch& launch,
                                               const std::array<std::int64_t, 3>& tile) {
  const LinePolicy defaults({0, 0},
                            {static_cast<int>(launch.upper[0]), static_cast<int>(launch.upper[1])});
  return {tile[0] > 0 ? tile[0] : defaults.m_tile[0], tile[1] > 0 ? tile[1] : defaults.m_tile[1],
          1};
}

}  // namespace

std::array<Index, 2> blocked_contiguous_range(const Index c_begin, const Index c_end,
                                              const bool zero_row_ends, const int m_contiguous) {
  const Index first = zero_row_ends ? c_begin - 1 : c_begin;
  const Index last = zero_row_ends ? c_end : c_end - 1;
  return {first / m_contiguous / column_alignment * column_alignment, last / m_contiguous + 1};
}

bool blocked_runs_fit(const int m_contiguous, const std::int64_t contiguous_extent) {
  return contiguous_extent % m_contiguous == 0;
}

LaplacianPlan plan_laplacian(const LaplacianKernelParams& params, const Layout layout,
                             const int element_bytes, const Grid& grid, const ExecLimits& limits) {
  return plan_laplacian(params, layout, element_bytes, grid,
                        grid.to_local(laplacian_update_box(grid)), limits);
}

bool line_prefetches(const LaplacianKernelParams& params, const bool gpu) {
  return params.kernel == LaplacianKernel::line && params.streaming_stores && !gpu &&
         host_prefetch_compiled();
}

LaplacianPlan plan_laplacian(const LaplacianKernelParams& params, const Layout layout,
                             const int element_bytes, const Grid& grid, const Box& box,
                             const ExecLimits& limits) {
  LaplacianPlan plan;
  plan.params = params;
  plan.layout = layout;
  plan.element_bytes = element_bytes;
  plan.axes = AxisRoles::of(layout);
  plan.mapping = resolve_mapping(layout, params.iterate, limits.gpu);
  plan.box = box;
  plan.spacing = grid.spacing;
  if (const auto problem = parameter_problem(params, element_bytes)) {
    plan.problem = problem->text;
    plan.problem_key = problem->key;
    plan.problem_allowed = problem->allowed;
    return plan;
  }
  if (params.prefetch.bytes != 0 && !line_prefetches(params, limits.gpu)) {
    plan.problem = "only line with streaming stores prefetches, on x86 hosts with AVX";
    plan.problem_key = "prefetch";
    plan.problem_allowed = "0 or \"auto\"";
    return plan;
  }
  const AxisRoles& a = plan.axes;
  plan.problem_key = "tile";
  if (params.kernel == LaplacianKernel::line && params.tile[a.contiguous] > 1) {
    plan.problem =
        "line's work items are whole lines along the contiguous axis: its tile entry "
        "must be 0 or 1";
    return plan;
  }
  if (!blocked_runs_fit(params.m_contiguous, grid.local_extents()[a.contiguous])) {
    plan.problem = "runs of " + std::to_string(params.m_contiguous) +
                   " points along the contiguous axis need a multiple of " +
                   std::to_string(params.m_contiguous) +
                   " points along it (the rank's allocated extent, halo included, is " +
                   std::to_string(grid.local_extents()[a.contiguous]) + ")";
    plan.problem_key = "m_contiguous";
    plan.problem_allowed = "1 or \"auto\" on this grid";
    return plan;
  }
  if (plan.box.empty()) return plan;
  LaplacianLaunch launch = params.kernel == LaplacianKernel::blocked ? blocked_launch(plan)
                           : params.kernel == LaplacianKernel::line  ? line_launch(plan)
                                                                     : mdrange_launch(plan);
  launch.s_begin = plan.box.lo[a.slow];
  launch.s_end = plan.box.hi[a.slow];
  launch.j_begin = plan.box.lo[1];
  launch.j_end = plan.box.hi[1];
  launch.c_begin = plan.box.lo[a.contiguous];
  launch.c_end = plan.box.hi[a.contiguous];
  if (launch.rank == 2) {
    launch.tile = resolved_line_tile(launch, {params.tile[a.slow], params.tile[1], 1});
    plan.problem = launch_problem(launch.tile, launch.lower, launch.upper, limits, 0);
  } else {
    const PlannedTile planned =
        plan_tile(plan.mapping, params.launch_bounds, launch.lower, launch.upper,
                  to_policy_order(plan.mapping, params.tile), limits);
    launch.tile = planned.tile;
    plan.problem = planned.problem;
  }
  plan.launch = launch;
  return plan;
}

int LaplacianPlan::zeroed_row_end_axis() const {
  const bool zeroing = params.kernel != LaplacianKernel::mdrange && params.zero_row_ends;
  return zeroing ? axes.contiguous : -1;
}

std::array<std::int64_t, 3> LaplacianPlan::points_per_group() const {
  if (!launch) return {0, 0, 0};
  if (params.kernel == LaplacianKernel::line) {
    std::array<std::int64_t, 3> points;
    points[axes.slow] =
        std::min<std::int64_t>(launch->tile[0] * params.m_slow, box.extent(axes.slow));
    points[1] = std::min<std::int64_t>(launch->tile[1] * params.m, box.extent(1));
    points[axes.contiguous] = box.extent(axes.contiguous);
    return points;
  }
  auto points = to_axis_order(mapping, launch->tile);
  if (params.kernel == LaplacianKernel::blocked) {
    points[axes.contiguous] *= params.m_contiguous;
    points[1] *= params.m;
    points[axes.slow] *= static_cast<std::int64_t>(params.m_slow) * params.blocks_per_item;
  }
  return points;
}

std::string LaplacianPlan::policy_description() const {
  if (params.kernel == LaplacianKernel::line)
    return layout == Layout::right ? "policy (i,j), lines along z, Iterate::Right"
                                   : "policy (k,j), lines along x, Iterate::Right";
  return mapping.describe();
}

std::string LaplacianPlan::details(const bool gpu) const {
  const auto plural = [](int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string out;
  switch (params.kernel) {
    case LaplacianKernel::mdrange:
      out = "1 point per work item";
      break;
    case LaplacianKernel::blocked:
      out = std::to_string(params.m) + " x " + std::to_string(params.m_slow) +
            " points per block (y x slowest axis)" +
            (params.m_contiguous == 2   ? " in pairs along the contiguous axis, "
             : params.m_contiguous == 4 ? " in quads along the contiguous axis, "
                                        : ", ") +
            plural(params.blocks_per_item, "block", "blocks") + " per work item, " +
            plural(params.parts, "y part", "y parts");
      break;
    case LaplacianKernel::line:
      out = plural(params.m, "row", "rows") + " of " + plural(params.m_slow, "plane", "planes") +
            " per work item";
      if (line_prefetches(params, gpu)) out += ", " + prefetch_words(params.prefetch);
      break;
  }
  if (params.kernel != LaplacianKernel::line)
    out += ", launch bounds " +
           (params.launch_bounds ? std::to_string(params.launch_bounds) : std::string("none"));
  if (params.kernel != LaplacianKernel::mdrange) {
    // GPUs stream evict-first from any kernel; hosts only from line with AVX.
    const bool streams =
        gpu || (params.kernel == LaplacianKernel::line && host_streaming_stores_compiled());
    out += params.streaming_stores && streams ? ", streaming stores" : ", plain stores";
  }
  if (zeroed_row_end_axis() >= 0) out += ", zero row ends";
  return out;
}

int auto_blocked_parts(const Grid& grid, Layout layout, int element_bytes, std::int64_t llc_bytes,
                       int m, int planes) {
  if (llc_bytes <= 0) return 1;
  const AxisRoles a = AxisRoles::of(layout);
  const Index contiguous = grid.local_extents()[a.contiguous];
  const Index ny = grid.local_extents()[1];
  const double plane_bytes = static_cast<double>(contiguous) * ny * element_bytes;
  // A quarter, not all of it: H100's L2 is two partitions (docs/PERFORMANCE.md).
  const Index parts = static_cast<Index>(std::ceil(planes * plane_bytes / (0.25 * llc_bytes)));
  const Index max_parts = std::max<Index>((laplacian_update_box(grid).extent(1) + m - 1) / m, 1);
  return static_cast<int>(std::clamp<Index>(parts, 1, max_parts));
}

}  // namespace kstencil
