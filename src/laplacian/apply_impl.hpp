#pragma once
// Definitions behind apply_laplacian and fill_test_field; included by one file per precision,
// which instantiates them for both layouts (two translation units so builds use two cores).
#include <stdexcept>

#include "laplacian/kernels/blocked.hpp"
#include "laplacian/kernels/line.hpp"
#include "laplacian/kernels/mdrange.hpp"
#include "laplacian/laplacian.hpp"

namespace kstencil {
namespace laplacian_detail {

template <class T, class KokkosLayout>
struct FillTestField {
  Field<T, KokkosLayout> u;
  TestFieldSpec spec;
  Kokkos::Array<Index, 3> offset;  // global index of local (0, 0, 0)

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    u(i, j, k) =
        static_cast<T>(test_field_value(spec, i + offset[0], j + offset[1], k + offset[2]));
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
  using Policy = Kokkos::MDRangePolicy<Kokkos::Rank<3>, Kokkos::IndexType<int>>;
  Kokkos::parallel_for(
      "kstencil::laplacian::fill", Policy({0, 0, 0}, {int(n[0]), int(n[1]), int(n[2])}),
      laplacian_detail::FillTestField<T, KokkosLayout>{
          u, spec, {grid.allocated.lo[0], grid.allocated.lo[1], grid.allocated.lo[2]}});
}

#define KSTENCIL_INSTANTIATE_LAPLACIAN(T, L)                                          \
  template void apply_laplacian<T, L>(const LaplacianPlan&, const Field<const T, L>&, \
                                      const Field<T, L>&);                            \
  template void fill_test_field<T, L>(const TestFieldSpec&, const Grid&, const Field<T, L>&);

}  // namespace kstencil
