#pragma once
// Seed 000's 7-point formula, evaluated in one fixed order by every kernel so that results agree
// bitwise: u*(-2)(1/hx^2+1/hy^2+1/hz^2) + (x neighbours)/hx^2 + (y ...)/hy^2 + (z ...)/hz^2.
#include <Kokkos_Core.hpp>
#include <array>
#include <type_traits>

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

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T stencil7(const T c, const T xm, const T xp, const T ym, const T yp,
                                       const T zm, const T zp, const StencilCoeffs<T>& a) {
  return c * a.center + (xm + xp) * a.x + (ym + yp) * a.y + (zm + zp) * a.z;
}

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
