#include "core/mapping.hpp"

#include <stdexcept>

namespace kstencil {

Layout parse_layout(const std::string& word) {
  if (word == "left") return Layout::left;
  if (word == "right") return Layout::right;
  throw std::invalid_argument("layout must be left or right, got " + word);
}

IterOrder parse_iter_order(const std::string& word) {
  if (word == "auto") return IterOrder::automatic;
  if (word == "left") return IterOrder::left;
  if (word == "right") return IterOrder::right;
  throw std::invalid_argument("iterate must be auto, left or right, got " + word);
}

std::string to_string(Layout layout) {
  return layout == Layout::left ? "left" : "right";
}

std::string to_string(IterOrder order) {
  return order == IterOrder::automatic ? "auto" : order == IterOrder::left ? "left" : "right";
}

std::string Mapping::describe() const {
  return std::string(reversed ? "policy (k,j,i)" : "policy (i,j,k)") +
         (iterate_right ? ", Iterate::Right" : ", Iterate::Left");
}

Mapping resolve_mapping(Layout layout, IterOrder order, bool gpu) {
  if (order == IterOrder::left) return Mapping{false, false};
  if (order == IterOrder::right) return Mapping{false, true};
  // Contiguous index: i for LayoutLeft, k for LayoutRight.
  if (gpu) {
    // Fastest on GPUs: policy dimension 0 (threadIdx.x).
    return layout == Layout::left ? Mapping{false, false} : Mapping{true, false};
  }
  // Fastest on the host: the innermost loop, the last dimension with Iterate::Right.
  return layout == Layout::left ? Mapping{false, false} : Mapping{false, true};
}

std::string format_triple(const std::array<std::int64_t, 3>& v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         "]";
}

std::optional<std::string> tile_problem(const std::array<std::int64_t, 3>& tile,
                                        const std::array<std::int64_t, 3>& extents,
                                        const ExecLimits& limits, int launch_bounds) {
  for (int d = 0; d < 3; ++d)
    if (tile[d] < 1) return "tile entries must be at least 1 after defaults are applied";
  if (!limits.gpu) return std::nullopt;
  const std::int64_t threads = tile[0] * tile[1] * tile[2];
  std::int64_t max_threads = limits.max_threads_per_block;
  std::string max_reason = "the device's maximum threads per block";
  if (launch_bounds > 0 && launch_bounds < max_threads) {
    max_threads = launch_bounds;
    max_reason = "kernel.launch_bounds";
  }
  if (max_threads > 0 && threads > max_threads)
    return std::to_string(threads) + " threads per block exceed " + std::to_string(max_threads) +
           " (" + max_reason + ")";
  static const char* block_names[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (limits.max_block_dims[d] > 0 && tile[d] > limits.max_block_dims[d])
      return std::to_string(tile[d]) + " threads along policy dimension " + std::to_string(d) +
             " (block " + block_names[d] + ") exceed the limit of " +
             std::to_string(limits.max_block_dims[d]) +
             (d == 2 ? " (Kokkos would silently skip work, Kokkos issue #8239)" : "");
  }
  for (int d = 0; d < 3; ++d) {
    const std::int64_t blocks = (extents[d] + tile[d] - 1) / tile[d];
    if (limits.max_grid_dims[d] > 0 && blocks > limits.max_grid_dims[d])
      return std::to_string(blocks) + " blocks along policy dimension " + std::to_string(d) +
             " exceed the grid limit of " + std::to_string(limits.max_grid_dims[d]) +
             " (Kokkos 3.4 would not launch, Kokkos issue #4192); use a larger tile there";
  }
  return std::nullopt;
}

}  // namespace kstencil
