#pragma once
// Verification of one kernel configuration against exact and independent answers.
#include <cmath>
#include <limits>
#include <vector>

#include "core/policy.hpp"
#include "laplacian/apply_impl.hpp"
#include "laplacian/compare.hpp"

namespace kstencil {
namespace laplacian_detail {

template <class T, class KokkosLayout>
struct MaxAbs {
  Field<const T, KokkosLayout> u;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k, double& m) const {
    const double v = u(i, j, k) < 0 ? -u(i, j, k) : u(i, j, k);
    if (v > m) m = v;
  }
};

template <class T, class KokkosLayout>
double max_abs(const Field<T, KokkosLayout>& u) {
  double m = 0;
  Kokkos::parallel_reduce(
      "kstencil::laplacian::max_abs",
      FieldPolicy3<KokkosLayout>({0, 0, 0}, {int(u.extent(0)), int(u.extent(1)), int(u.extent(2))}),
      MaxAbs<T, KokkosLayout>{u}, Kokkos::Max<double>(m));
  return m;
}

}  // namespace laplacian_detail

template <class T, class KokkosLayout>
LaplacianVerification verify_laplacian(const LaplacianPlan& plan, const Grid& grid, TestField field,
                                       bool corrupt) {
  using namespace laplacian_detail;
  const double eps = std::numeric_limits<T>::epsilon();
  const Real3& h = grid.spacing;
  const double inverse_h2 = 1 / (h[0] * h[0]) + 1 / (h[1] * h[1]) + 1 / (h[2] * h[2]);
  auto u = allocate_field<T, KokkosLayout>("verify_u", grid);
  auto f = allocate_field<T, KokkosLayout>("verify_f", grid);
  LaplacianVerification result;
  const int zeroed_axis = plan.zeroed_row_end_axis();

  // Exactness: the discrete Laplacian of the quadratic field is the constant at every point. The
  // only error is rounding: |u| <= umax at each of 7 points, coefficients summing to 4/h^2 in
  // magnitude, about 8 roundings (3 forming u, 5 in the stencil) -> 32 eps umax sum(1/h^2).
  // With power-of-two spacings and small grids all values are exact integers: error 0.
  fill_test_field(TestFieldSpec::of(TestField::quadratic, grid), grid, u);
  Kokkos::deep_copy(f, std::numeric_limits<T>::quiet_NaN());
  apply_laplacian<T, KokkosLayout>(plan, u, f);
  result.quadratic_tolerance = 32 * eps * max_abs(u) * inverse_h2;
  const auto exact = compare_on_host(
      f, grid, [](Index, Index, Index) { return static_cast<T>(quadratic_laplacian); },
      zeroed_axis);
  result.quadratic_max_error = exact.max_diff;

  // Independent reference: the same formula in plain host loops over a host copy of u. Bitwise
  // equal unless the compiler contracts the kernel's multiply-adds differently (FMA on GPUs): each
  // of the 4 multiply-adds then rounds once less, an error below 4 eps times the largest partial
  // sum, itself at most 4 umax sum(1/h^2) -> 16 eps umax sum(1/h^2).
  fill_test_field(TestFieldSpec::of(field, grid), grid, u);
  Kokkos::deep_copy(f, std::numeric_limits<T>::quiet_NaN());
  apply_laplacian<T, KokkosLayout>(plan, u, f);
  if (corrupt)
    Kokkos::deep_copy(Kokkos::subview(f, 1, 1, 1), T(1) / std::numeric_limits<T>::epsilon());
  const auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  const auto a = StencilCoeffs<T>::from_spacing(h);
  const auto reference = compare_on_host(
      f, grid,
      [&](Index i, Index j, Index k) {
        return stencil7(uh(i, j, k), uh(i - 1, j, k), uh(i + 1, j, k), uh(i, j - 1, k),
                        uh(i, j + 1, k), uh(i, j, k - 1), uh(i, j, k + 1), a);
      },
      zeroed_axis);
  result.reference_tolerance = 16 * eps * max_abs(u) * inverse_h2;
  result.reference_max_diff = reference.max_diff;
  result.reference_mismatches = reference.mismatches;
  result.untouched_violations = exact.untouched_violations + reference.untouched_violations;
  result.passed = result.quadratic_max_error <= result.quadratic_tolerance &&
                  result.reference_max_diff <= result.reference_tolerance &&
                  result.untouched_violations == 0;
  return result;
}

#define KSTENCIL_INSTANTIATE_LAPLACIAN_VERIFY(T, L)                                        \
  template LaplacianVerification verify_laplacian<T, L>(const LaplacianPlan&, const Grid&, \
                                                        TestField, bool);

}  // namespace kstencil
