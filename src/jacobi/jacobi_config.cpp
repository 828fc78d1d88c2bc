// The Jacobi kernel's norm strategies and per-backend default configuration.
#include <stdexcept>

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
                                         const Mapping& mapping) {
  JacobiKernelConfig config;
  config.layout = layout;
  config.mapping = mapping;
  if (limits.gpu) {
    int contiguous = 0;
    if (layout == Layout::right)
      for (int d = 2; d >= 0; --d)
        if (!is_collapsed(grid, d)) {
          contiguous = d;
          break;
        }
    config.tile = {1, 1, 1};
    config.tile[contiguous] = 128;
    config.launch_bounds = 128;
  } else if (is_collapsed(grid, 1) && is_collapsed(grid, 2)) {
    config.tile = {65536, 1, 1};
  }
  return config;
}

}  // namespace kstencil
