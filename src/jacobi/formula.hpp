#pragma once
// The Jacobi update of one point, which every kernel calls so that all compute the same bits as
// the host reference (jacobi_reference_iteration).
#include <Kokkos_Core.hpp>

namespace kstencil {

template <class T>
struct JacobiFormula {
  T cx, cy, cz, inverse_diagonal;
  bool use_y, use_z, use_rhs;  // false on collapsed axes / without a right-hand side

  // The neighbours along x, y and z and the right-hand side f at the point (unused ones: any).
  KOKKOS_FORCEINLINE_FUNCTION T operator()(const T xm, const T xp, const T ym, const T yp,
                                           const T zm, const T zp, const T f) const {
    T sum = (xm + xp) * cx;
    if (use_y) sum = sum + (ym + yp) * cy;
    if (use_z) sum = sum + (zm + zp) * cz;
    if (use_rhs) sum = sum - f;
    return sum * inverse_diagonal;
  }

  // The same on a 3D grid, f always subtracted (0 without a right-hand side: x - (+0) is x, bit for
  // bit): no branch, so fewer registers in the blocked kernel.
  KOKKOS_FORCEINLINE_FUNCTION T three_d(const T xm, const T xp, const T ym, const T yp, const T zm,
                                        const T zp, const T f) const {
    T sum = (xm + xp) * cx;
    sum = sum + (ym + yp) * cy;
    sum = sum + (zm + zp) * cz;
    sum = sum - f;
    return sum * inverse_diagonal;
  }
};

}  // namespace kstencil
