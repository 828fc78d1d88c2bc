#include "core/side_instance.hpp"

#include <stdexcept>
#include <string>

namespace kstencil {
namespace {

// Non-blocking: no implicit ordering with the legacy default stream, which Kokkos 3.4's default
// CUDA instance uses. The device's greatest priority: the side's small kernels (a halo's packing,
// Jacobi's second stage) take the next free SM instead of waiting behind all of the update's
// queued work groups (docs/PERFORMANCE.md, Jacobi).
void* new_stream() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream = nullptr;
  int least = 0, greatest = 0;
  cudaError_t status = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (status == cudaSuccess)
    status = cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest);
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("cannot create a CUDA stream: ") +
                             cudaGetErrorString(status));
  return stream;
#elif defined(KOKKOS_ENABLE_HIP)
  hipStream_t stream = nullptr;
  int least = 0, greatest = 0;
  hipError_t status = hipDeviceGetStreamPriorityRange(&least, &greatest);
  if (status == hipSuccess)
    status = hipStreamCreateWithPriority(&stream, hipStreamNonBlocking, greatest);
  if (status != hipSuccess)
    throw std::runtime_error(std::string("cannot create a HIP stream: ") +
                             hipGetErrorString(status));
  return stream;
#else
  return nullptr;
#endif
}

Kokkos::DefaultExecutionSpace instance_on([[maybe_unused]] void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  return Kokkos::Cuda(static_cast<cudaStream_t>(stream));
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
  return Kokkos::HIP(static_cast<hipStream_t>(stream));
#elif defined(KOKKOS_ENABLE_HIP)
  return Kokkos::Experimental::HIP(static_cast<hipStream_t>(stream));
#else
  return Kokkos::DefaultExecutionSpace();
#endif
}

}  // namespace

SideInstance::SideInstance() : stream_(new_stream()), space_(instance_on(stream_)) {}

SideInstance::~SideInstance() {
  space_.fence();
  space_ = Kokkos::DefaultExecutionSpace();  // Kokkos' hold on the stream ends before the stream
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
#elif defined(KOKKOS_ENABLE_HIP)
  static_cast<void>(hipStreamDestroy(static_cast<hipStream_t>(stream_)));
#endif
}

}  // namespace kstencil
