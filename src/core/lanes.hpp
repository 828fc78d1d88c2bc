#pragma once
// A work item's neighbours along the contiguous axis, taken from the GPU lanes beside it.
#include <Kokkos_Core.hpp>

namespace kstencil {

// The MDRange tiles kstencil builds for its stencils put the contiguous axis along threadIdx.x, so
// the lane before a work item usually holds the element one before the work item's own and the
// lane after it the element one after. On CUDA those two neighbours then come from the lanes'
// registers (warp shuffles) instead of from two more loads of data the warp already holds. Which
// lane holds what is checked, not assumed: a work item compares its element's address with those of
// the lanes beside it (lanes that returned early, warp edges and other tilings fail the check) and
// loads what no lane beside it holds. A lane that holds the element before `here` also holds the
// element before any `here + offset` that both lanes address the same way (rows of a register
// block). Every lane active at construction must make the same shuffle calls. On hosts and HIP both
// neighbours are always loaded.
class ContiguousLanes {
 public:
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION explicit ContiguousLanes(const T* here) {
#if defined(__CUDA_ARCH__)
    mask_ = __activemask();
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    const auto address = reinterpret_cast<unsigned long long>(here);
    const auto before = __shfl_up_sync(mask_, address, 1);
    const auto after = __shfl_down_sync(mask_, address, 1);
    before_holds_ = lane > 0 && (mask_ >> (lane - 1) & 1u) && before + sizeof(T) == address;
    after_holds_ = lane < 31 && (mask_ >> (lane + 1) & 1u) && after == address + sizeof(T);
#else
    (void)here;
    (void)mask_;
#endif
  }

  // Whether the lane before (after) this one holds the element before (after) this one's.
  KOKKOS_FORCEINLINE_FUNCTION bool before_holds() const {
    return before_holds_;
  }
  KOKKOS_FORCEINLINE_FUNCTION bool after_holds() const {
    return after_holds_;
  }

  // `value` as held by the lane before (after) this one; meaningful where before_holds()
  // (after_holds()).
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION T from_before(const T value) const {
#if defined(__CUDA_ARCH__)
    return __shfl_up_sync(mask_, value, 1);
#else
    return value;
#endif
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION T from_after(const T value) const {
#if defined(__CUDA_ARCH__)
    return __shfl_down_sync(mask_, value, 1);
#else
    return value;
#endif
  }

 private:
  unsigned mask_ = 0;
  bool before_holds_ = false, after_holds_ = false;
};

}  // namespace kstencil
