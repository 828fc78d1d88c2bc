#pragma once
// Device limits for checks that need no device.
#include "core/exec_space.hpp"

namespace kstencil {

// An H100's limits as Kokkos reports them.
inline ExecLimits h100_limits() {
  ExecLimits gpu;
  gpu.backend = "Cuda";
  gpu.gpu = true;
  gpu.max_threads_per_block = 1024;
  gpu.max_block_dims = {1024, 1024, 64};
  gpu.max_grid_dims = {2147483647, 65535, 65535};
  gpu.llc_bytes = 50 << 20;
  gpu.resident_threads = 132 * 2048;  // 132 SMs of 2048 threads
  gpu.summed_lanes = 32;
  return gpu;
}

}  // namespace kstencil
