#pragma once
// Definitions behind apply_laplacian and fill_test_field; included by one file per precision,
// which instantiates them for both layouts (two translation units so builds use two cores).
#include <stdexcept>

#include "core/policy.hpp"
#include "laplacian/kernels/blocked.hpp"
#include "laplacian/kernels/line.hpp"
#include "laplacian/kernels/mdrange.hpp"
#include "laplacian/laplacian.hpp"

namespace kstencil {
namespace laplacian_detail {

// The sine field's factors along x, then y, then z, of a rank's allocated box (three sines a
// point made the fill of a 512^3 field take seconds on 2 cores).
struct SineFactors {
  Kokkos::View<double*> factors;
  TestFieldSpec spec;
  Kokkos::Array<Index, 3> offset, extent;
  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const int d = n < extent[0] ? 0 : n < extent[0] + extent[1] ? 1 : 2;
    const Index local = d == 0 ? n : d == 1 ? n - extent[0] : n - extent[0] - extent[1];
    factors(n) = sine_factor(spec, d, local + offset[d]);
  }
};

template <class T, class KokkosLayout>
struct FillTestField {
  Field<T, KokkosLayout> u;
  TestFieldSpec spec;
  Kokkos::Array<Index, 3> offset;    // global index of local (0, 0, 0)
  Kokkos::View<const double*> sine;  // SineFactors' (sine fields)
  Kokkos::Array<Index, 3> extent;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    if (spec.kind == TestField::sine) {
      // test_field_value's product, factor by factor.
      double product = 1;
      product *= sine(i);
      product *= sine(extent[0] + j);
      product *= sine(extent[0] + extent[1] + k);
      u(i, j, k) = static_cast<T>(product);
    } else {
      u(i, j, k) =
          static_cast<T>(test_field_value(spec, i + offset[0], j + offset[1], k + offset[2]));
    }
  }
};

}  // namespace laplacian_detail

template <class T, class KokkosLayout>
void apply_laplacian(const LaplacianPlan& plan, const Field<const T, KokkosLayout>& u,
                     const Field<T, KokkosLayout>& f) {
  using namespace laplacian_kernels;
  if (plan.problem) throw std::invalid_argument("Laplacian plan not valid: " + *plan.problem);
  if (plan.layout != layout_of<KokkosLayout>() || plan.element_bytes != sizeof(T))
    throw std::invalid_argument("Laplacian plan made for other fields");
  if (!plan.launch) return;
  const auto a = StencilCoeffs<T>::from_spacing(plan.spacing);
  switch (plan.params.kernel) {
    case LaplacianKernel::mdrange:
      return launch_mdrange(plan, a, u, f);
    case LaplacianKernel::blocked:
      return launch_blocked(plan, a, u, f);
    case LaplacianKernel::line:
      return launch_line(plan, a, u, f);
  }
}

template <class T, class KokkosLayout>
void fill_test_field(const TestFieldSpec& spec, const Grid& grid, const Field<T, KokkosLayout>& u) {
  const Index3 n = grid.local_extents();
  const Kokkos::Array<Index, 3> offset{grid.allocated.lo[0], grid.allocated.lo[1],
                                       grid.allocated.lo[2]},
      extent{n[0], n[1], n[2]};
  Kokkos::View<double*> sine;
  if (spec.kind == TestField::sine) {
    sine = Kokkos::View<double*>("kstencil::laplacian::sine_factors", n[0] + n[1] + n[2]);
    Kokkos::parallel_for("kstencil::laplacian::sine_factors",
                         Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, n[0] + n[1] + n[2]),
                         laplacian_detail::SineFactors{sine, spec, offset, extent});
  }
  Kokkos::parallel_for(
      "kstencil::laplacian::fill",
      FieldPolicy3<KokkosLayout>({0, 0, 0}, {int(n[0]), int(n[1]), int(n[2])}),
      laplacian_detail::FillTestField<T, KokkosLayout>{u, spec, offset, sine, extent});
}

#define KSTENCIL_INSTANTIATE_LAPLACIAN(T, L)                                          \
  template void apply_laplacian<T, L>(const LaplacianPlan&, const Field<const T, L>&, \
                                      const Field<T, L>&);                            \
  template void fill_test_field<T, L>(const TestFieldSpec&, const Grid&, const Field<T, L>&);

}  // namespace kstencil
