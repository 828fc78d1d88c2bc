#pragma once
// The 7-point Laplacian (seed 000, AMD lab notes kernels 5 and 7) as Kokkos kernels: plan, launch,
// test fields and verification.
#include <cstdint>
#include <string>

#include "core/field.hpp"
#include "core/grid.hpp"
#include "laplacian/plan.hpp"
#include "laplacian/stencil.hpp"

namespace kstencil {

// f = Laplacian(u) on the plan's update box; other points of f are not touched except the row ends
// the plan zeroes. Throws std::invalid_argument for a plan with a problem or of another layout or
// precision. Launches only: the plan was computed once, before.
template <class T, class KokkosLayout>
void apply_laplacian(const LaplacianPlan& plan, const Field<const T, KokkosLayout>& u,
                     const Field<T, KokkosLayout>& f);

// Test fields. quadratic: u = (x-xc)^2 + 2 (y-yc)^2 + 3 (z-zc)^2 with offsets taken in index space
// (exact for power-of-two spacings), whose Laplacian is exactly quadratic_laplacian everywhere.
// sine: u = sin(pi X) sin(pi Y) sin(pi Z), X = (x - x0)/Lx over the domain, Laplacian
// -pi^2 (1/Lx^2 + 1/Ly^2 + 1/Lz^2) u.
enum class TestField { quadratic, sine };
TestField parse_test_field(const std::string& word);
inline constexpr double quadratic_laplacian = 12.0;

struct TestFieldSpec {
  TestField kind;
  Kokkos::Array<Index, 3> points;  // Kokkos::Array: usable in device code
  Kokkos::Array<double, 3> spacing;
  static TestFieldSpec of(TestField kind, const Grid& grid) {
    return {kind,
            {grid.points[0], grid.points[1], grid.points[2]},
            {grid.spacing[0], grid.spacing[1], grid.spacing[2]}};
  }
};

// The sine field's factor along axis d at global index g: the field is their product in axis
// order, so that a fill computing each axis' factors once makes the same values.
KOKKOS_INLINE_FUNCTION double sine_factor(const TestFieldSpec& s, const int d, const Index g) {
#if KOKKOS_VERSION >= 30700
  using Kokkos::sin;
#else
  using Kokkos::Experimental::sin;
#endif
  constexpr double pi = 3.14159265358979323846;
  return sin(pi * static_cast<double>(g) / static_cast<double>(s.points[d] - 1));
}

// Value of the test field at global point (i, j, k), on host or device.
KOKKOS_INLINE_FUNCTION double test_field_value(const TestFieldSpec& s, Index i, Index j, Index k) {
  const Index g[3] = {i, j, k};
  if (s.kind == TestField::quadratic) {
    double sum = 0;
    for (int d = 0; d < 3; ++d) {
      const double offset = static_cast<double>(g[d] - s.points[d] / 2) * s.spacing[d];
      sum += (d + 1) * offset * offset;
    }
    return sum;
  }
  double product = 1;
  for (int d = 0; d < 3; ++d) product *= sine_factor(s, d, g[d]);
  return product;
}

// Analytic Laplacian of the test field at global point (i, j, k).
double analytic_laplacian(const TestFieldSpec& spec, Index i, Index j, Index k);

// u = the test field over the grid's allocated box.
template <class T, class KokkosLayout>
void fill_test_field(const TestFieldSpec& spec, const Grid& grid, const Field<T, KokkosLayout>& u);

struct LaplacianVerification {
  double quadratic_max_error = 0, quadratic_tolerance = 0;
  double reference_max_diff = 0, reference_tolerance = 0;
  std::int64_t reference_mismatches = 0;  // points not bitwise equal to the reference
  std::int64_t untouched_violations = 0;  // points outside the update box that were written
  // Several ranks: the timed step (halo exchange, overlap) against the plan on u known everywhere,
  // points that differ (set by the run); -1: not checked (one rank times the plan itself).
  std::int64_t step_mismatches = -1;
  bool passed = false;
};

// Checks `plan` on `grid`: exactness on the quadratic field and agreement with an independent host
// reference on `field`; every point outside the update box must stay untouched. `corrupt` (the
// sweep tests' hook, corruption_requested) changes one point of the result the reference checks.
template <class T, class KokkosLayout>
LaplacianVerification verify_laplacian(const LaplacianPlan& plan, const Grid& grid, TestField field,
                                       bool corrupt = false);

}  // namespace kstencil
