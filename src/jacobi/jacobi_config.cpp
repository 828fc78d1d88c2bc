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
                                         const Mapping& mapping, NormStrategy norm) {
  JacobiKernelConfig config;
  config.layout = layout;
  config.mapping = mapping;
  config.norm = norm;
  if (limits.gpu) {
    int contiguous = 0;
    if (layout == Layout::right)
      for (int d = 2; d >= 0; --d)
        if (!is_collapsed(grid, d)) {
          contiguous = d;
          break;
        }
    // Kokkos 3.4 launches an MDRange reduction on as many blocks as a tile has threads (rounded
    // to a power of two, at most that many): 128-thread tiles give 128 blocks. Measured on H200
    // (docs/PERFORMANCE.md, Jacobi), the iteration with the reduce norm took 11.8 / 4.06 / 4.06 /
    // 4.54 ms at 512^3 double for 128 / 256 / 512 / 1024 threads, and 0.186 / 0.069 ms on the 1D
    // problem for 128 / 256; without a norm, 128 and 256 are equal (1.05 / 1.03 ms).
    const int threads = norm == NormStrategy::reduce ? 256 : 128;
    config.tile = {1, 1, 1};
    config.tile[contiguous] = threads;
    config.launch_bounds = threads;
  } else if (is_collapsed(grid, 1) && is_collapsed(grid, 2)) {
    config.tile = {65536, 1, 1};
  }
  return config;
}

}  // namespace kstencil
