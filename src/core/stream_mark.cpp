#include "core/stream_mark.hpp"

#include <stdexcept>
#include <string>

namespace kstencil {
namespace {

#if defined(KOKKOS_ENABLE_CUDA)
void check(const cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
#elif defined(KOKKOS_ENABLE_HIP)
void check(const hipError_t status, const char* what) {
  if (status != hipSuccess)
    throw std::runtime_error(std::string(what) + ": " + hipGetErrorString(status));
}
#endif

}  // namespace

StreamMark::StreamMark() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cannot create a CUDA event");
  event_ = event;
#elif defined(KOKKOS_ENABLE_HIP)
  hipEvent_t event = nullptr;
  check(hipEventCreateWithFlags(&event, hipEventDisableTiming), "cannot create a HIP event");
  event_ = event;
#endif
}

StreamMark::~StreamMark() {
  if (!event_) return;  // moved from, or a host back end's
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEventDestroy(static_cast<cudaEvent_t>(event_));
#elif defined(KOKKOS_ENABLE_HIP)
  static_cast<void>(hipEventDestroy(static_cast<hipEvent_t>(event_)));
#endif
}

void StreamMark::record([[maybe_unused]] const Kokkos::DefaultExecutionSpace& space) {
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaEventRecord(static_cast<cudaEvent_t>(event_), space.cuda_stream()),
        "cannot record a CUDA event");
#elif defined(KOKKOS_ENABLE_HIP)
  check(hipEventRecord(static_cast<hipEvent_t>(event_), space.hip_stream()),
        "cannot record a HIP event");
#endif
}

void StreamMark::wait() const {
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)), "cannot wait for a CUDA event");
#elif defined(KOKKOS_ENABLE_HIP)
  check(hipEventSynchronize(static_cast<hipEvent_t>(event_)), "cannot wait for a HIP event");
#else
  Kokkos::DefaultExecutionSpace().fence();
#endif
}

void StreamMark::make_wait([[maybe_unused]] const Kokkos::DefaultExecutionSpace& space) const {
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaStreamWaitEvent(space.cuda_stream(), static_cast<cudaEvent_t>(event_), 0),
        "cannot make a CUDA stream wait for an event");
#elif defined(KOKKOS_ENABLE_HIP)
  check(hipStreamWaitEvent(space.hip_stream(), static_cast<hipEvent_t>(event_), 0),
        "cannot make a HIP stream wait for an event");
#endif
}

}  // namespace kstencil
