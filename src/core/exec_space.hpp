#pragma once
// What the default execution space is and what it allows: used by `kstencil info`, by tile
// validation and by the choice of per-backend defaults.
#include <array>
#include <cstdint>
#include <string>

namespace kstencil {

struct ExecLimits {
  std::string backend;            // Kokkos name of the default execution space, e.g. "Cuda"
  std::string device_name;        // GPU name or CPU model
  bool gpu = false;               // work items are GPU threads (CUDA, HIP)
  int max_threads_per_block = 0;  // 0: no limit (host)
  std::array<int, 3> max_block_dims{0, 0, 0};          // 0: no limit
  std::array<std::int64_t, 3> max_grid_dims{0, 0, 0};  // blocks per grid dimension a launch may use
  std::int64_t llc_bytes = 0;         // last-level cache (L2 on GPUs, L3/L2 on CPUs); 0 if unknown
  int concurrency = 1;                // Kokkos concurrency of the default execution space
  std::int64_t resident_threads = 1;  // threads the device runs at once (GPU: SMs x threads/SM)
  int host_hardware_threads = 0;      // the host's hardware threads, whoever uses them; 0 unknown
  std::int64_t core_cache_bytes = 0;  // a host core's own last cache level (its L2); 0 unknown
  std::int64_t core_l1d_bytes = 0;    // a host core's L1 data cache; 0 unknown
  int device_id = -1;                 // GPU the process uses; -1 on hosts
  int summed_lanes = 1;  // lanes whose values a kernel's warp adds in registers (core/warp_sum.hpp)
};

// Whether a host has few hardware threads (the 2-core development VMs), below the many-core hosts
// (the GPU machine's 16 cores): there a core has the last-level cache nearly to itself, and the
// host defaults reuse data from it; many-core hosts reuse from each core's own cache.
inline bool few_core_host(const ExecLimits& limits) {
  constexpr int many_core_host_threads = 8;
  return limits.host_hardware_threads < many_core_host_threads;
}

// GPUs this process sees (0 for host-only builds); callable before Kokkos is initialised.
int visible_gpu_count();

// The free memory of this process' GPU now (Kokkos initialised); -1 on hosts.
std::int64_t device_free_bytes();

// Limits of Kokkos::DefaultExecutionSpace (Kokkos must be initialised).
ExecLimits default_exec_limits();

// "3.4.1" from KOKKOS_VERSION.
std::string kokkos_version_string();
// Enabled backends, e.g. "Serial, OpenMP".
std::string enabled_backends();

}  // namespace kstencil
