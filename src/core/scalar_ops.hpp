#pragma once
// Arithmetic on single values with the interface of the host SIMD vectors (arch/x86's Zmm), so
// that a formula written once against it (a stencil's point from its neighbours' pair sums) runs
// on scalars and on vectors, bit for bit the same.
#include <Kokkos_Core.hpp>

namespace kstencil {

template <class T>
struct ScalarOps {
  using V = T;
  KOKKOS_FORCEINLINE_FUNCTION static T load(const T* p) { return *p; }
  KOKKOS_FORCEINLINE_FUNCTION static T splat(const T v) { return v; }
  KOKKOS_FORCEINLINE_FUNCTION static T add(const T a, const T b) { return a + b; }
  KOKKOS_FORCEINLINE_FUNCTION static T sub(const T a, const T b) { return a - b; }
  KOKKOS_FORCEINLINE_FUNCTION static T mul(const T a, const T b) { return a * b; }
};

}  // namespace kstencil
