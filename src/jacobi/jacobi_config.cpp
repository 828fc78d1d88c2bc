// The Jacobi kernel's norm strategies, per-backend default configuration and plan.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "arch/streams.hpp"
#include "core/exec_space.hpp"
#include "core/line_tile.hpp"
#include "core/planned_tile.hpp"
#include "jacobi/jacobi.hpp"

namespace kstencil {

NormStrategy parse_norm_strategy(const std::string& word) {
  if (word == "reduce") return NormStrategy::reduce;
  if (word == "reduce-range") return NormStrategy::reduce_range;
  if (word == "atomic") return NormStrategy::atomic;
  if (word == "kokkos-kernels") return NormStrategy::kokkos_kernels;
  if (word == "team") return NormStrategy::team;
  if (word == "blocked") return NormStrategy::blocked;
  if (word == "line") return NormStrategy::line;
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
    case NormStrategy::team:
      return "team";
    case NormStrategy::blocked:
      return "blocked";
    case NormStrategy::line:
      return "line";
  }
  return "?";
}

NormStrategy default_norm_strategy(const ExecLimits& limits, const Grid& grid) {
  for (int d = 0; d < 3; ++d)
    if (is_collapsed(grid, d)) return limits.gpu ? NormStrategy::team : NormStrategy::reduce;
  return limits.gpu ? NormStrategy::blocked : NormStrategy::line;
}

JacobiKernelConfig default_jacobi_kernel(const ExecLimits& limits, const Grid& grid, Layout layout,
                                         IterOrder iterate, NormStrategy norm) {
  JacobiKernelConfig config;
  config.layout = layout;
  config.iterate = iterate;
  config.norm = norm;
  if (norm == NormStrategy::blocked) {
    // The Laplacian's blocked defaults (tile, launch bounds) apply: plan_jacobi resolves them.
  } else if (limits.gpu) {
    int contiguous = 0;
    if (layout == Layout::right)
      for (int d = 2; d >= 0; --d)
        if (!is_collapsed(grid, d)) {
          contiguous = d;
          break;
        }
    // Kokkos 3.4 launches an MDRange reduction on as many blocks as a tile has threads, so the
    // reduce norm wants large tiles: 256 with launch bounds 256 was fastest, 128 equal without a
    // norm; team: teams of 256 (docs/PERFORMANCE.md, Jacobi).
    const int threads = norm == NormStrategy::reduce || norm == NormStrategy::team ? 256 : 128;
    config.tile = {1, 1, 1};
    config.tile[contiguous] = threads;
    config.launch_bounds = threads;
  } else if (is_collapsed(grid, 1) && is_collapsed(grid, 2)) {
    // Chunks of 65536 points, at least one a thread on shorter lines.
    const std::int64_t per_thread =
        (grid.local_extents()[0] + limits.concurrency - 1) / std::max(limits.concurrency, 1);
    config.tile = {std::clamp<std::int64_t>(per_thread, 1, 65536), 1, 1};
  }
  return config;
}

namespace {

// The team strategy's launch: rows along the fields' contiguous axis (the layout's, skipping
// collapsed axes), cut into pieces a team covers with a few points per thread.
void plan_teams(JacobiPlan& plan, const Grid& grid, const Box& box, const ExecLimits& limits) {
  const Index3 n = grid.local_extents();
  const bool right = plan.config.layout == Layout::right;
  int fast = right ? 2 : 0;
  while (n[fast] == 1 && fast != (right ? 0 : 2)) fast += right ? -1 : 1;
  int next = 0;
  for (int d : right ? std::array<int, 3>{2, 1, 0} : std::array<int, 3>{0, 1, 2})
    if (d != fast) plan.team_axes[++next] = d;
  plan.team_axes[0] = fast;
  const auto tile = plan.config.tile[fast];
  plan.team_size = limits.gpu ? static_cast<int>(tile > 0 ? tile : 256) : 0;
  if (limits.gpu && plan.team_size > limits.max_threads_per_block)
    plan.problem = "a team of " + std::to_string(plan.team_size) + " threads (kernel.tile along " +
                   "xyz"[fast] + ") is more than the device's " +
                   std::to_string(limits.max_threads_per_block);
  // 16-byte packets where the points of a row outside the box are its two ends (no part of an
  // overlapped update has them) and the rows hold whole packets from aligned starts.
  const int packet = 16 / std::max(plan.config.element_bytes, 1);
  plan.team_row = static_cast<int>(n[fast]);
  plan.team_width = (plan.config.element_bytes == 4 || plan.config.element_bytes == 8) &&
                            box == grid.to_local(owned_interior(grid)) && n[fast] % packet == 0
                        ? packet
                        : 1;
  const auto read = [&](const int d) { return d == 0 || !is_collapsed(grid, d); };
  plan.team_rows = (read(plan.team_axes[1]) ? 1 : 0) + (read(plan.team_axes[2]) ? 2 : 0);
  // GPUs: 16 planes a team along the slowest axis; rows of single points in pieces of up to 8
  // points a thread; rows of packets in pieces of 1, 2, 4, 8 or 16 packets a thread, at most 16
  // accesses a thread over the planes, whichever brings the league nearest one wave of teams (half
  // the device's resident threads), measured best on seed 004's 1D problem and 4096^2 grids
  // (docs/PERFORMANCE.md, "The team kernel"). Hosts: long pieces of single rows (a team is one
  // thread there).
  plan.team_march = limits.gpu ? std::max(std::min(plan.box_extent[plan.team_axes[2]], 16), 1) : 1;
  const std::int64_t slabs =
      (plan.box_extent[plan.team_axes[2]] + plan.team_march - 1) / plan.team_march;
  const std::int64_t row = plan.team_width > 1 ? n[fast] : plan.box_extent[fast];
  const std::int64_t chunks_per_plane = std::int64_t(plan.box_extent[plan.team_axes[1]]) * slabs;
  const auto chunks_of = [&](const std::int64_t chunk) {
    return std::max<std::int64_t>((row + chunk - 1) / chunk, 1);
  };
  int per_thread = 0;
  if (limits.gpu) {
    const std::int64_t whole_row =
        (row / plan.team_width + plan.team_size - 1) / std::max(plan.team_size, 1);
    if (plan.team_width == 1) {
      per_thread = static_cast<int>(std::min<std::int64_t>(whole_row, 8));
    } else {
      const double wave =
          std::max(static_cast<double>(limits.resident_threads) / 2 / plan.team_size, 1.0);
      double nearest = std::numeric_limits<double>::max();
      for (int packets = 1; packets <= 16 && (packets == 1 || packets * plan.team_march <= 16);
           packets *= 2) {
        const int each = static_cast<int>(std::min<std::int64_t>(whole_row, packets));
        const double league = static_cast<double>(
            chunks_per_plane * chunks_of(std::int64_t(each) * plan.team_size * plan.team_width));
        const double off = std::abs(std::log2(league / wave));
        if (off < nearest) {  // a tie keeps the fewer packets a thread
          nearest = off;
          per_thread = each;
        }
      }
    }
  }
  plan.team_chunk = limits.gpu ? std::max(per_thread, 1) * plan.team_size * plan.team_width : 65536;
  plan.team_chunks = static_cast<int>(chunks_of(plan.team_chunk));
  plan.league = plan.box_size == 0 ? 0 : chunks_per_plane * plan.team_chunks;
}

// The blocked strategy's launch: the Laplacian's blocked plan over the same box, row ends stored
// (with their own values) only where the box is the whole owned interior: a part's row ends may
// be another part's points.
void plan_blocked(JacobiPlan& plan, const Grid& grid, const Box& box, const ExecLimits& limits) {
  for (int d = 0; d < 3; ++d)
    if (is_collapsed(grid, d)) {
      plan.problem = "jacobi.norm = \"blocked\" needs a 3D grid (the grid has one point along " +
                     std::string(1, "xyz"[d]) + ")";
      return;
    }
  const JacobiKernelConfig& c = plan.config;
  LaplacianKernelRequest request;
  request.kernel = LaplacianKernel::blocked;
  request.iterate = c.iterate;
  request.tile = c.tile;
  if (c.launch_bounds > 0) request.launch_bounds = c.launch_bounds;
  if (c.blocks_per_item > 0) request.blocks_per_item = c.blocks_per_item;
  request.zero_row_ends = box == grid.to_local(owned_interior(grid));
  request.whole_warps_along_rows = true;  // for the warps' sums below
  const LaplacianKernelParams params =
      resolve_laplacian_params(request, limits, c.layout, grid, c.element_bytes);
  plan.blocked = plan_laplacian(params, c.layout, c.element_bytes, grid, box, limits);
  if (plan.blocked->problem) plan.problem = plan.blocked->problem;
  if (plan.problem || !plan.blocked->launch) return;
  // A warp's lanes are consecutive items of one row where the contiguous axis is the policy's
  // first dimension (a GPU block's x) and its tile there whole warps; with the range padded to
  // whole warps, no warp has a lane outside it.
  LaplacianLaunch& l = *plan.blocked->launch;
  const int lanes = limits.summed_lanes;
  const bool contiguous_first =
      to_policy_order(plan.blocked->mapping, Index3{0, 1, 2})[0] == plan.blocked->axes.contiguous;
  if (lanes > 1 && contiguous_first && l.tile[0] % lanes == 0) {
    l.upper[0] = l.lower[0] + (l.upper[0] - l.lower[0] + lanes - 1) / lanes * lanes;
    plan.sum_lanes = lanes;
  }
}

// The line strategy's work items: on few-core AVX2 and AVX-512 hosts 4 planes' rows together, else
// one plane's. Few-core hosts: 16 rows each, swept in the Laplacian's line tiles (host_line_tile:
// a thread's chunk of planes in blocks of rows that keep the planes beside a block in the core's
// cache). Many-core hosts, or where no tile fits: a work item a block of as many rows as keep
// those it reads (its planes, the two beside them and the right-hand side's) in half a core's
// cache, the blocks outermost over all threads, which was ahead of the Laplacian's tiles on the
// 16-core host (docs/PERFORMANCE.md, Jacobi and CG).
void plan_line(JacobiPlan& plan, const Grid& grid, const Box& box, const ExecLimits& limits) {
  for (int d = 0; d < 3; ++d)
    if (is_collapsed(grid, d)) {
      plan.problem = "jacobi.norm = \"line\" needs a 3D grid (the grid has one point along " +
                     std::string(1, "xyz"[d]) + ")";
      return;
    }
  if (limits.gpu) {
    plan.problem =
        "jacobi.norm = \"line\" is a host kernel (rows a work item: on an H100 0.001 of the "
        "copy); GPUs: \"blocked\" (the default for 3D grids), \"team\", \"reduce\"";
    return;
  }
  plan.line_planes = host_simd_lines_compiled() && few_core_host(limits) ? 4 : 1;
  plan.line_prefetch.bytes =
      host_simd_lines_compiled() ? default_prefetch_bytes : default_single_stream_prefetch_bytes;
  const int fast = plan.config.layout == Layout::right ? 2 : 0;
  // Where the box spans the update along the contiguous axis, the points beside its rows are
  // boundary or ghost points that no part of the update writes: the rows may store their input
  // values there and so stream every cache line whole.
  const Box update = grid.to_local(owned_interior(grid));
  plan.line_ends = box.lo[fast] == update.lo[fast] && box.hi[fast] == update.hi[fast]
                       ? RowEnds::input
                       : RowEnds::none;
  if (few_core_host(limits)) {
    const int rows = 16;  // one fence per 16 rows, as the Laplacian's
    const std::array<std::int64_t, 2> tile =
        host_line_tile(plan.box_extent[2 - fast], plan.box_extent[1], plan.box_extent[fast],
                       plan.config.element_bytes, limits.concurrency, true, limits.core_cache_bytes,
                       rows, plan.line_planes);
    if (tile[0] > 0 && tile[1] > 0) {
      plan.line_rows = rows;
      plan.line_tile = tile;
      return;
    }
  }
  const std::int64_t row_bytes =
      std::int64_t(std::max(plan.box_extent[fast], 1)) * plan.config.element_bytes;
  const std::int64_t rows_read = 2 * plan.line_planes + 2;
  const std::int64_t rows_fit = limits.core_cache_bytes > 0
                                    ? limits.core_cache_bytes / 2 / (rows_read * row_bytes)
                                    : plan.box_extent[1];
  // At least one row, also for an empty part of an overlapped update.
  plan.line_rows = static_cast<int>(
      std::max<std::int64_t>(std::min<std::int64_t>(rows_fit, plan.box_extent[1]), 1));
  plan.line_tile = {1, 1};
  plan.line_blocks_outer = true;
}

}  // namespace

std::string JacobiPlan::describe() const {
  if (config.norm == NormStrategy::team)
    return "teams of " + (team_size > 0 ? std::to_string(team_size) : std::string("AUTO")) +
           " threads along " + "xyz"[team_axes[0]] + ", " + std::to_string(team_width) +
           (team_width == 1 ? " point" : " points") + " an access" +
           (gpu ? ", up to " + std::to_string(team_chunk / (std::max(team_size, 1) * team_width)) +
                      " accesses a thread"
                : std::string()) +
           ", " + std::to_string(team_march) + (team_march == 1 ? " plane" : " planes") +
           " a team; the last team adds the sums";
  if (config.norm == NormStrategy::line)
    return std::to_string(line_rows) + " rows along " +
           "xyz"[config.layout == Layout::right ? 2 : 0] + " of " + std::to_string(line_planes) +
           (line_planes == 1 ? " plane" : " planes") + " a work item, " +
           (line_blocks_outer
                ? std::string("the blocks of rows outermost, ")
                : "tiles of " + std::to_string(line_tile[0]) + " x " +
                      std::to_string(line_tile[1]) + " work items (planes x rows), ") +
           prefetch_words(line_prefetch) +
           (line_ends == RowEnds::input ? ", whole cache lines (the rows' ends stored unchanged)"
                                        : std::string()) +
           (config.element_bytes != 4 || !host_simd_lines_compiled()
                ? std::string(", the squares summed in double")
            : sum_points > 1 ? ", the squares of " + std::to_string(sum_points) +
                                   " planes summed in float, then in double"
                             : std::string(", each square in float, summed in double"));
  if (!blocked) return mapping.describe();
  return blocked->policy_description() + "; " + blocked->details(gpu) +
         (sum_lanes > 1 ? "; norm sums added over " + std::to_string(sum_lanes) + " lanes a warp"
                        : "");
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
  plan.gpu = limits.gpu;
  if (config.norm == NormStrategy::line) plan_line(plan, grid, box, limits);
  if (config.norm == NormStrategy::team) plan_teams(plan, grid, box, limits);
  if (config.norm == NormStrategy::blocked) plan_blocked(plan, grid, box, limits);
  if (config.norm == NormStrategy::kokkos_kernels) plan.sum_points = grid.allocated.size();
  // line: the S planes' squares at a vector in T on AVX2 and AVX-512 rows, else the change in T.
  if (config.norm == NormStrategy::line)
    plan.sum_points = host_simd_lines_compiled() && !limits.gpu ? plan.line_planes : 1;
  if (config.norm == NormStrategy::team && plan.team_width > 1)
    plan.sum_points = std::int64_t(plan.team_width) * plan.team_march;
  if (plan.blocked) {
    const LaplacianKernelParams& p = plan.blocked->params;
    plan.sum_points = std::int64_t(p.m) * p.m_slow * p.m_contiguous * p.blocks_per_item;
  }
  return plan;
}

double jacobi_error_tolerance(const JacobiPlan& plan, const double points) {
  const double epsilon = plan.config.element_bytes == 4 ? std::numeric_limits<float>::epsilon()
                                                        : std::numeric_limits<double>::epsilon();
  const double partial =
      plan.sum_points > 0 ? (static_cast<double>(plan.sum_points) + 2) * epsilon : 0.0;
  return partial + (std::max(points, 16.0) + 2) * std::numeric_limits<double>::epsilon();
}

}  // namespace kstencil
