#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>

#include "laplacian/kernels.hpp"

namespace kstencil {

LaplacianVariant parse_laplacian_variant(const std::string& word) {
  if (word == "mdrange") return LaplacianVariant::mdrange;
  if (word == "register-blocked") return LaplacianVariant::register_blocked;
  if (word == "subdomain") return LaplacianVariant::subdomain;
  if (word == "line") return LaplacianVariant::line;
  if (word == "march") return LaplacianVariant::march;
  if (word == "scratch") return LaplacianVariant::scratch;
  throw std::invalid_argument("unknown Laplacian variant " + word);
}

std::string to_string(LaplacianVariant variant) {
  switch (variant) {
    case LaplacianVariant::mdrange:
      return "mdrange";
    case LaplacianVariant::register_blocked:
      return "register-blocked";
    case LaplacianVariant::subdomain:
      return "subdomain";
    case LaplacianVariant::line:
      return "line";
    case LaplacianVariant::march:
      return "march";
    case LaplacianVariant::scratch:
      return "scratch";
  }
  return "?";
}

TestField parse_test_field(const std::string& word) {
  if (word == "quadratic") return TestField::quadratic;
  if (word == "sine") return TestField::sine;
  throw std::invalid_argument("unknown test field " + word);
}

bool is_column_kernel(const LaplacianKernelConfig& config) {
  return config.variant == LaplacianVariant::register_blocked ||
         (config.variant == LaplacianVariant::subdomain && (config.m > 1 || config.m_slow > 1));
}

int zeroed_row_end_axis(const LaplacianKernelConfig& config) {
  const bool zeroing_variant = is_column_kernel(config) || config.variant == LaplacianVariant::line;
  if (!zeroing_variant || !config.zero_row_ends) return -1;
  return config.layout == Layout::right ? 2 : 0;
}

namespace laplacian_detail {

std::vector<LaunchPlan> plan_launches(const LaplacianKernelConfig& config, const Grid& grid) {
  const Box box = grid.to_local(laplacian_update_box(grid));
  if (box.empty()) return {};
  const bool column = is_column_kernel(config);
  const Index m = column ? std::max(config.m, 1) : 1;
  const Index m_slow = column ? std::max(config.m_slow, 1) : 1;
  const int slow = config.layout == Layout::right ? 0 : 2;
  const int contiguous = 2 - slow;
  const Index ny = box.extent(1);
  Index chunk = ny;
  if (config.variant == LaplacianVariant::subdomain) {
    const Index parts = std::max(config.parts, 1);
    chunk = (ny + parts - 1) / parts;
    chunk = (chunk + m - 1) / m * m;  // whole blocks of m points per part
  }
  const Index parts = (ny + chunk - 1) / chunk;
  const bool one_launch = column && parts > 1 && config.parts_in_one_launch;
  std::vector<LaunchPlan> plans;
  for (Index j0 = box.lo[1]; j0 < box.hi[1]; j0 += chunk) {
    LaunchPlan plan;
    plan.column = column;
    plan.j_begin = j0;
    plan.j_end = std::min(j0 + chunk, box.hi[1]);
    plan.s_begin = box.lo[slow];
    plan.s_end = box.hi[slow];
    plan.c_begin = box.lo[contiguous];
    plan.c_end = box.hi[contiguous];
    Index3 lower = box.lo, upper = box.hi;
    if (column) {
      lower[1] = 0;
      upper[1] = (plan.j_end - plan.j_begin + m - 1) / m;
      lower[slow] = 0;
      plan.blocks_per_item = std::max(config.blocks_per_item, 1);
      const Index blocks_along_slow = (box.extent(slow) + m_slow - 1) / m_slow;
      plan.slow_items_per_part =
          (blocks_along_slow + plan.blocks_per_item - 1) / plan.blocks_per_item;
      plan.y_blocks_per_part = upper[1];
      upper[slow] = plan.slow_items_per_part;
      if (one_launch) {  // every part's items along the slowest axis, part after part
        plan.j_end = box.hi[1];
        upper[slow] *= parts;
      }
      plan.zero_row_ends = config.zero_row_ends;
      const auto range =
          column_contiguous_range(box.lo[contiguous], box.hi[contiguous], plan.zero_row_ends);
      lower[contiguous] = range.lower;
      upper[contiguous] = range.upper;
    } else {
      lower[1] = plan.j_begin;
      upper[1] = plan.j_end;
    }
    plan.lower = to_policy_order(config.mapping, lower);
    plan.upper = to_policy_order(config.mapping, upper);
    plans.push_back(plan);
    if (one_launch) break;
  }
  return plans;
}

MarchPlan plan_march(const LaplacianKernelConfig& config, const Grid& grid) {
  const Box box = grid.to_local(laplacian_update_box(grid));
  MarchPlan plan;
  if (box.empty()) return plan;
  const int contiguous = config.layout == Layout::right ? 2 : 0;
  const int slow = 2 - contiguous;
  const Index m = std::max(config.m, 1);
  const Index parts = std::clamp<Index>(config.parts, 1, box.extent(slow));
  plan.j_begin = static_cast<int>(box.lo[1]);
  plan.j_end = static_cast<int>(box.hi[1]);
  plan.slow_begin = static_cast<int>(box.lo[slow]);
  plan.slow_end = static_cast<int>(box.hi[slow]);
  plan.slab = static_cast<int>((box.extent(slow) + parts - 1) / parts);
  plan.c_begin = static_cast<int>(box.lo[contiguous]);
  plan.c_end = static_cast<int>(box.hi[contiguous]);
  plan.lower = {box.lo[contiguous] / column_alignment * column_alignment, 0, 0};
  plan.upper = {box.hi[contiguous], (box.extent(1) + m - 1) / m,
                (box.extent(slow) + plan.slab - 1) / plan.slab};
  return plan;
}

std::array<std::int64_t, 3> march_tile(const LaplacianKernelConfig& config) {
  return {config.tile[config.layout == Layout::right ? 2 : 0], config.tile[1], 1};
}

std::vector<ScratchPlan> plan_scratch(const LaplacianKernelConfig& config, const Grid& grid) {
  const Box box = grid.to_local(laplacian_update_box(grid));
  if (box.empty()) return {};
  const ScratchTile tile = scratch_tile(config);
  const int slow = config.layout == Layout::right ? 0 : 2;
  const int contiguous = 2 - slow;
  const Index parts = std::max(config.parts, 1);
  Index chunk = (box.extent(1) + parts - 1) / parts;
  chunk = (chunk + tile.y - 1) / tile.y * tile.y;  // whole tiles per part
  std::vector<ScratchPlan> plans;
  for (Index j0 = box.lo[1]; j0 < box.hi[1]; j0 += chunk) {
    ScratchPlan plan;
    plan.c_begin = static_cast<int>(box.lo[contiguous]);
    plan.c_end = static_cast<int>(box.hi[contiguous]);
    plan.c_origin = static_cast<int>(box.lo[contiguous] / column_alignment * column_alignment);
    plan.j_begin = static_cast<int>(j0);
    plan.j_end = static_cast<int>(std::min(j0 + chunk, box.hi[1]));
    plan.s_begin = static_cast<int>(box.lo[slow]);
    plan.s_end = static_cast<int>(box.hi[slow]);
    plans.push_back(plan);
  }
  return plans;
}

}  // namespace laplacian_detail

ScratchTile scratch_tile(const LaplacianKernelConfig& config) {
  const int contiguous = config.layout == Layout::right ? 2 : 0;
  ScratchTile tile;
  if (config.tile[contiguous] > 0) tile.contiguous = config.tile[contiguous];
  if (config.tile[1] > 0) tile.y = config.tile[1];
  if (config.tile[2 - contiguous] > 0) tile.slow = config.tile[2 - contiguous];
  return tile;
}

std::vector<LaunchShape> laplacian_launch_shapes(const LaplacianKernelConfig& config,
                                                 const Grid& grid) {
  using namespace laplacian_detail;
  std::vector<LaunchShape> shapes;
  if (config.variant == LaplacianVariant::line) {
    const Box box = grid.to_local(laplacian_update_box(grid));
    if (box.empty()) return shapes;
    const LinePolicy policy = line_policy(box, config.layout, config.m, config.m_slow, config.tile);
    LaunchShape shape;
    for (int d = 0; d < 2; ++d) {
      shape.tile[d] = policy.m_tile[d];
      shape.extents[d] = policy.m_upper[d] - policy.m_lower[d];
    }
    shape.tile[2] = shape.extents[2] = 1;
    return {shape};
  }
  if (config.variant == LaplacianVariant::scratch) return shapes;  // a TeamPolicy, no tile
  if (config.variant == LaplacianVariant::march) {
    const MarchPlan plan = plan_march(config, grid);
    if (plan.slab == 0) return shapes;
    const LaunchPlan launch{plan.lower, plan.upper};
    dispatch_launch_bound(config.launch_bounds, [&](auto bound) {
      LaunchShape shape;
      shape.tile =
          resolved_tile<Kokkos::Iterate::Left, decltype(bound)::value>(launch, march_tile(config));
      for (int d = 0; d < 3; ++d) shape.extents[d] = plan.upper[d] - plan.lower[d];
      shapes.push_back(shape);
    });
    return shapes;
  }
  const auto tile = to_policy_order(config.mapping, config.tile);
  dispatch_traits(config.mapping, config.launch_bounds, [&](auto, auto iterate, auto bound) {
    for (const auto& plan : plan_launches(config, grid)) {
      LaunchShape shape;
      shape.tile = resolved_tile<decltype(iterate)::value, decltype(bound)::value>(plan, tile);
      for (int d = 0; d < 3; ++d) shape.extents[d] = plan.upper[d] - plan.lower[d];
      shapes.push_back(shape);
    }
  });
  return shapes;
}

namespace {

std::optional<std::string> scratch_problem(const LaplacianKernelConfig& config,
                                           const ExecLimits& limits) {
  const ScratchTile tile = scratch_tile(config);
  const std::string shape = std::to_string(tile.contiguous) + " x " + std::to_string(tile.y) +
                            " x " + std::to_string(tile.slow) +
                            " (contiguous axis x y x planes per slab)";
  const auto one_of = [](std::int64_t v, std::initializer_list<std::int64_t> allowed) {
    return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
  };
  if (!one_of(tile.contiguous, {32, 64, 128}) || !one_of(tile.y, {2, 4, 8}) || tile.slow < 1)
    return "scratch tile " + shape +
           ": the contiguous axis takes 32, 64 or 128 points, y 2, 4 or 8, the slab at least 1 "
           "plane";
  const std::int64_t threads = tile.contiguous * tile.y;
  if (limits.gpu && limits.max_threads_per_block > 0 && threads > limits.max_threads_per_block)
    return "scratch tile " + shape + " needs " + std::to_string(threads) +
           " threads per team, more than the " + std::to_string(limits.max_threads_per_block) +
           " a block may have";
  const std::int64_t bytes =
      config.element_bytes == 4 ? scratch_bytes<float>(tile) : scratch_bytes<double>(tile);
  const std::int64_t available =
      Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace>::scratch_size_max(0);
  if (bytes > available)
    return "scratch tile " + shape + " needs " + std::to_string(bytes) +
           " bytes of team scratch, more than the " + std::to_string(available) +
           " Kokkos allows per team";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> laplacian_config_problem(const LaplacianKernelConfig& config,
                                                    const Grid& grid, const ExecLimits& limits) {
  if (config.m != 1 && config.m != 2 && config.m != 4 && config.m != 8 && config.m != 16)
    return "m must be 1, 2, 4, 8 or 16";
  if (config.m_slow != 1 && config.m_slow != 2 && config.m_slow != 4)
    return "m_slow must be 1, 2 or 4";
  if (too_large_register_block(config))
    return "m x m_slow must be at most " + std::to_string(max_block_points);
  if (config.blocks_per_item < 1) return "blocks_per_item must be at least 1";
  if (config.parts < 1) return "parts must be at least 1";
  if (config.variant == LaplacianVariant::scratch) return scratch_problem(config, limits);
  for (const auto& shape : laplacian_launch_shapes(config, grid))
    if (auto problem = tile_problem(shape.tile, shape.extents, limits, config.launch_bounds))
      return "policy tile " + format_triple(shape.tile) + " over extents " +
             format_triple(shape.extents) + ": " + *problem;
  return std::nullopt;
}

int auto_subdomain_parts(const Grid& grid, Layout layout, int element_bytes, std::int64_t llc_bytes,
                         int m, int planes) {
  if (llc_bytes <= 0) return 1;
  const Index contiguous = grid.local_extents()[layout == Layout::left ? 0 : 2];
  const Index ny = grid.local_extents()[1];
  const double plane_bytes = static_cast<double>(contiguous) * ny * element_bytes;
  // A quarter, not all of it: H100's L2 is two partitions, and with 2048 x 1024 x 256 in layout
  // left 2 parts (three planes = 48% of the L2) reached 0.74 of memcpy, 4 parts 0.85
  // (docs/PERFORMANCE.md).
  const Index parts = static_cast<Index>(std::ceil(planes * plane_bytes / (0.25 * llc_bytes)));
  const Index max_parts = std::max<Index>((laplacian_update_box(grid).extent(1) + m - 1) / m, 1);
  return static_cast<int>(std::clamp<Index>(parts, 1, max_parts));
}

int auto_march_parts(const Grid& grid, Layout layout, std::int64_t resident_threads, int waves,
                     int m) {
  const Box box = laplacian_update_box(grid);
  if (box.empty()) return 1;
  const int contiguous = layout == Layout::right ? 2 : 0;
  const Index blocks = (box.extent(1) + std::max(m, 1) - 1) / std::max(m, 1);
  const Index plane_items = box.extent(contiguous) * blocks;
  const Index wanted = static_cast<Index>(waves) * std::max<std::int64_t>(resident_threads, 1);
  const Index parts = (wanted + plane_items - 1) / plane_items;
  const Index max_parts = std::max<Index>(box.extent(2 - contiguous) / march_min_slab, 1);
  return static_cast<int>(std::clamp<Index>(parts, 1, max_parts));
}

double analytic_laplacian(const TestFieldSpec& spec, Index i, Index j, Index k) {
  if (spec.kind == TestField::quadratic) return quadratic_laplacian;
  constexpr double pi = 3.14159265358979323846;
  double wave = 0;
  for (int d = 0; d < 3; ++d) {
    const double length = static_cast<double>(spec.points[d] - 1) * spec.spacing[d];
    wave += pi * pi / (length * length);
  }
  return -wave * test_field_value(spec, i, j, k);
}

}  // namespace kstencil
