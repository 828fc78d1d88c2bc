#pragma once
// Seed 000's 7-point formula, evaluated in one fixed order by every kernel so that results agree
// bitwise: u*(-2)(1/hx^2+1/hy^2+1/hz^2) + (x neighbours)/hx^2 + (y ...)/hy^2 + (z ...)/hz^2.
#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <type_traits>

#include "core/scalar_ops.hpp"

namespace kstencil {

template <class T>
struct StencilCoeffs {
  T center, x, y, z;
  static StencilCoeffs from_spacing(const std::array<double, 3>& h) {
    const T ix = static_cast<T>(1.0 / (h[0] * h[0]));
    const T iy = static_cast<T>(1.0 / (h[1] * h[1]));
    const T iz = static_cast<T>(1.0 / (h[2] * h[2]));
    return {static_cast<T>(-2) * (ix + iy + iz), ix, iy, iz};
  }
};

// The formula from the neighbours' sums along each axis, on values or vectors (Ops: ScalarOps or
// the host SIMD vectors' operations).
template <class Ops, class V, class T>
KOKKOS_FORCEINLINE_FUNCTION V stencil7_of_pairs(const V c, const V x_pair, const V y_pair,
                                                const V z_pair, const StencilCoeffs<T>& a) {
  V sum = Ops::mul(c, Ops::splat(a.center));
  sum = Ops::add(sum, Ops::mul(x_pair, Ops::splat(a.x)));
  sum = Ops::add(sum, Ops::mul(y_pair, Ops::splat(a.y)));
  return Ops::add(sum, Ops::mul(z_pair, Ops::splat(a.z)));
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T stencil7(const T c, const T xm, const T xp, const T ym, const T yp,
                                       const T zm, const T zp, const StencilCoeffs<T>& a) {
  return stencil7_of_pairs<ScalarOps<T>>(c, xm + xp, ym + yp, zm + zp, a);
}

// The Laplacian as the point of stencil_lines' rows (arch/streams.hpp).
template <class T>
struct StencilPoint {
  StencilCoeffs<T> a;
  template <class Ops, class V>
  KOKKOS_FORCEINLINE_FUNCTION V of(const V centre, const V x_pair, const V y_pair, const V z_pair,
                                   std::ptrdiff_t /* from the row's start */) const {
    return stencil7_of_pairs<Ops>(centre, x_pair, y_pair, z_pair, a);
  }
};

// Kernels that walk the slowest axis, y and the contiguous axis (x, y, z in LayoutRight; z, y, x in
// LayoutLeft) index fields by those roles and evaluate the stencil by them.
template <class KokkosLayout>
KOKKOS_FORCEINLINE_FUNCTION constexpr bool x_is_slowest() {
  return std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
}

// stencil7 with the neighbours given by axis role, passed on in stencil7's x, y, z order.
template <class KokkosLayout, class T>
KOKKOS_FORCEINLINE_FUNCTION T stencil7_by_role(const T centre, const T s_minus, const T s_plus,
                                               const T y_minus, const T y_plus, const T c_minus,
                                               const T c_plus, const StencilCoeffs<T>& a) {
  return x_is_slowest<KokkosLayout>()
             ? stencil7(centre, s_minus, s_plus, y_minus, y_plus, c_minus, c_plus, a)
             : stencil7(centre, c_minus, c_plus, y_minus, y_plus, s_minus, s_plus, a);
}

}  // namespace kstencil
