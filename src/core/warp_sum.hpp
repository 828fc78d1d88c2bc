#pragma once
// The sum of a value over the lanes of a GPU warp, so that a kernel writes one partial sum a warp
// instead of one a work item (Jacobi's blocked norm: a 32nd of the sums for its second stage to
// write and read). CUDA only (shuffles); elsewhere one lane, the value itself.
#include <Kokkos_Core.hpp>

namespace kstencil {

// Lanes warp_sum adds in the default execution space's kernels (ExecLimits::summed_lanes).
#if defined(KOKKOS_ENABLE_CUDA)
inline constexpr int warp_sum_lanes = 32;
#else
inline constexpr int warp_sum_lanes = 1;
#endif

// Every lane of the warp must call it (none inactive or returned): lane 0 gets the warp's sum, in
// a fixed order (a tree over lane distances 16, 8, 4, 2, 1), so a run's sums are reproducible.
KOKKOS_FORCEINLINE_FUNCTION double warp_sum(double value) {
#if defined(__CUDA_ARCH__)
  for (int distance = warp_sum_lanes / 2; distance > 0; distance /= 2)
    value += __shfl_down_sync(0xffffffffu, value, distance);
#endif
  return value;
}

}  // namespace kstencil
