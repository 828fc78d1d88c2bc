#pragma once
// Two neighbouring values of the contiguous axis in one access: on GPUs a 64-bit (float) or
// 128-bit (double) load through the read-only path and an evict-first store, so that a warp moves
// as many bytes per instruction in float as in double; elsewhere two plain accesses. The address
// must be aligned to two values (kernels check the fields' extents before they pair).
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "core/stores.hpp"

namespace kstencil {

template <class T>
struct Pair {
  T first, second;
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION Pair<T> load_pair(const T* const where) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    const float2 v = __ldg(reinterpret_cast<const float2*>(where));
    return {v.x, v.y};
  } else if constexpr (std::is_same_v<T, double>) {
    const double2 v = __ldg(reinterpret_cast<const double2*>(where));
    return {v.x, v.y};
  }
#endif
  return {where[0], where[1]};
}

template <bool Streaming, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_pair(T* const where, const T first, const T second) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    const float2 v = make_float2(first, second);
    if (Streaming)
      __stcs(reinterpret_cast<float2*>(where), v);
    else
      *reinterpret_cast<float2*>(where) = v;
    return;
  } else if constexpr (std::is_same_v<T, double>) {
    const double2 v = make_double2(first, second);
    if (Streaming)
      __stcs(reinterpret_cast<double2*>(where), v);
    else
      *reinterpret_cast<double2*>(where) = v;
    return;
  }
#endif
  store_output<Streaming>(where, first);
  store_output<Streaming>(where + 1, second);
}

}  // namespace kstencil
