#include "core/exec_space.hpp"

#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/warp_sum.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace kstencil {
namespace {

#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

// The size of cpu0's data or unified cache of `level`, from sysfs, or else from sysconf (glibc's
// figure can be wrong in guests: 256 MiB of L3 on the development machine's KVM guest, whose sysfs
// and lscpu say 32 MiB); 0 if neither knows.
std::int64_t host_cache_bytes(int level) {
  for (int index = 0; index < 16; ++index) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int cache_level = 0;
    std::string type, size;
    if (!(level_file >> cache_level)) break;
    if (!(type_file >> type) || !(size_file >> size) || cache_level != level ||
        type == "Instruction")
      continue;
    char* unit_begin = nullptr;
    const long value = std::strtol(size.c_str(), &unit_begin, 10);
    const std::string unit = unit_begin;
    const std::int64_t scale = unit == "K"   ? 1 << 10
                               : unit == "M" ? 1 << 20
                               : unit == "G" ? 1 << 30
                                             : 1;
    if (value > 0) return value * scale;
  }
  const long bytes = sysconf(level == 3   ? _SC_LEVEL3_CACHE_SIZE
                             : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                          : _SC_LEVEL1_DCACHE_SIZE);
  return bytes > 0 ? bytes : 0;
}

std::int64_t host_llc_bytes() {
  const std::int64_t l3 = host_cache_bytes(3);
  return l3 > 0 ? l3 : host_cache_bytes(2);
}
#endif

}  // namespace

std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

std::string enabled_backends() {
  std::vector<std::string> names;
#if defined(KOKKOS_ENABLE_SERIAL)
  names.push_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  names.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  names.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  names.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  names.push_back("HIP");
#endif
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  return joined;
}

int visible_gpu_count() {
  int count = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipGetDeviceCount(&count) != hipSuccess) count = 0;
#endif
  return count;
}

std::int64_t device_free_bytes() {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
  std::size_t free = 0, total = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return -1;
#else
  if (hipMemGetInfo(&free, &total) != hipSuccess) return -1;
#endif
  return static_cast<std::int64_t>(free);
#else
  return -1;
#endif
}

ExecLimits default_exec_limits() {
  ExecLimits limits;
  limits.backend = Kokkos::DefaultExecutionSpace::name();
  limits.concurrency = Kokkos::DefaultExecutionSpace().concurrency();
  limits.host_hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
#if defined(KOKKOS_ENABLE_CUDA)
  int device = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    throw std::runtime_error("cannot query the CUDA device's properties");
#else
  int device = 0;
  hipDeviceProp_t prop;
  if (hipGetDevice(&device) != hipSuccess || hipGetDeviceProperties(&prop, device) != hipSuccess)
    throw std::runtime_error("cannot query the HIP device's properties");
#endif
  limits.gpu = true;
  limits.summed_lanes = warp_sum_lanes;
  limits.device_id = device;
  limits.device_name = prop.name;
  limits.max_threads_per_block = prop.maxThreadsPerBlock;
  for (int d = 0; d < 3; ++d) {
    limits.max_block_dims[d] = prop.maxThreadsDim[d];
    limits.max_grid_dims[d] = prop.maxGridSize[d];
  }
  // Kokkos 3.4 clamps every MDRange grid dimension to maxGridSize[0] and so fails to launch when
  // blocks along y or z exceed 65535 (Kokkos issue #4192); keep the hardware limit for y and z.
  limits.llc_bytes = prop.l2CacheSize;
  limits.resident_threads =
      static_cast<std::int64_t>(prop.multiProcessorCount) * prop.maxThreadsPerMultiProcessor;
#else
  limits.resident_threads = limits.concurrency;
  limits.device_name = cpu_model();
  limits.llc_bytes = host_llc_bytes();
  limits.core_cache_bytes = host_cache_bytes(2);
  limits.core_l1d_bytes = host_cache_bytes(1);
#endif
  return limits;
}

}  // namespace kstencil
