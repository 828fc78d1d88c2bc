#pragma once
// The Jacobi update of one point, which every kernel calls so that all compute the same bits as
// the host reference (jacobi_reference_iteration).
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "core/scalar_ops.hpp"

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
    return three_d_of_pairs<ScalarOps<T>>(xm + xp, ym + yp, zm + zp, f);
  }

  // three_d from the neighbours' sums along each axis, on values or vectors (Ops: ScalarOps or the
  // host SIMD vectors' operations).
  template <class Ops, class V>
  KOKKOS_FORCEINLINE_FUNCTION V three_d_of_pairs(const V x_pair, const V y_pair, const V z_pair,
                                                 const V f) const {
    V sum = Ops::mul(x_pair, Ops::splat(cx));
    sum = Ops::add(sum, Ops::mul(y_pair, Ops::splat(cy)));
    sum = Ops::add(sum, Ops::mul(z_pair, Ops::splat(cz)));
    sum = Ops::sub(sum, f);
    return Ops::mul(sum, Ops::splat(inverse_diagonal));
  }
};

// The 3D update as the point of stencil_lines' rows (arch/streams.hpp): f from a field laid out as
// the iterate (RhsField) or the same everywhere.
template <class T, bool RhsField>
struct JacobiPoint {
  JacobiFormula<T> formula;
  const T* f;  // RhsField: f at the row's start
  T uniform;   // else f everywhere
  template <class Ops, class V>
  KOKKOS_FORCEINLINE_FUNCTION V of(const V, const V x_pair, const V y_pair, const V z_pair,
                                   const std::ptrdiff_t offset) const {
    return formula.template three_d_of_pairs<Ops>(
        x_pair, y_pair, z_pair, RhsField ? Ops::load(f + offset) : Ops::splat(uniform));
  }
};

}  // namespace kstencil
