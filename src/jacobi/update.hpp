#pragma once
// The Jacobi update of one point from the fields, for the MDRange, flat and team kernels (the
// blocked kernel has its own point, src/jacobi/blocked.hpp); all call JacobiFormula, so every
// variant computes the same values.
#include <Kokkos_Core.hpp>

#include "core/field.hpp"
#include "jacobi/formula.hpp"

namespace kstencil {
namespace jacobi_detail {

template <class T, class KokkosLayout>
struct Update {
  Field<const T, KokkosLayout> old_values;
  Field<T, KokkosLayout> new_values;
  Field<const T, KokkosLayout> rhs;
  JacobiFormula<T> formula;
  T rhs_value;  // f when uniform_rhs (rhs unused)
  bool uniform_rhs;

  KOKKOS_FORCEINLINE_FUNCTION double operator()(const int i, const int j, const int k) const {
    const bool y = formula.use_y, z = formula.use_z;
    const T old = old_values(i, j, k);
    const T f = !formula.use_rhs ? T(0) : uniform_rhs ? rhs_value : rhs(i, j, k);
    const T value =
        formula(old_values(i - 1, j, k), old_values(i + 1, j, k),
                y ? old_values(i, j - 1, k) : T(0), y ? old_values(i, j + 1, k) : T(0),
                z ? old_values(i, j, k - 1) : T(0), z ? old_values(i, j, k + 1) : T(0), f);
    new_values(i, j, k) = value;
    const double change = static_cast<double>(value) - static_cast<double>(old);
    return change * change;
  }
};

}  // namespace jacobi_detail
}  // namespace kstencil
