#pragma once
// An execution space instance whose work can run beside the default instance's: on CUDA and HIP a
// non-blocking stream of its own, of the device's greatest priority, so that a halo's packing, host
// copies and unpacking overlap the interior update launched on the default instance; on host
// backends the default instance itself (its kernels run to completion one after another anyway).
#include <Kokkos_Core.hpp>

namespace kstencil {

class SideInstance {
 public:
  SideInstance();
  ~SideInstance();
  SideInstance(const SideInstance&) = delete;
  SideInstance& operator=(const SideInstance&) = delete;

  const Kokkos::DefaultExecutionSpace& space() const { return space_; }
  // Whether work on space() runs concurrently with the default instance's.
  static constexpr bool concurrent() {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
    return true;
#else
    return false;
#endif
  }

 private:
  void* stream_ = nullptr;  // the backend's stream handle, owned here (Kokkos does not own it)
  Kokkos::DefaultExecutionSpace space_;
};

}  // namespace kstencil
