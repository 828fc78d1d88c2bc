#pragma once
// mdrange: one point per work item, a plain Kokkos MDRange policy over the update box. The
// baseline users compare the other kernels against.
#include "core/field.hpp"
#include "core/policy.hpp"
#include "laplacian/kernels/common.hpp"
#include "laplacian/plan.hpp"

namespace kstencil {
namespace laplacian_kernels {

template <class T, class KokkosLayout, bool Reversed>
struct PointStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;

  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    const int i = Reversed ? p2 : p0;
    const int k = Reversed ? p0 : p2;
    f(i, j, k) = stencil7(u(i, j, k), u(i - 1, j, k), u(i + 1, j, k), u(i, j - 1, k),
                          u(i, j + 1, k), u(i, j, k - 1), u(i, j, k + 1), a);
  }
};

template <class T, class KokkosLayout>
void launch_mdrange(const LaplacianPlan& plan, const StencilCoeffs<T>& a,
                    const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  const LaplacianLaunch& l = *plan.launch;
  dispatch_traits(
      plan.mapping, plan.params.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
        constexpr bool Reversed = decltype(reversed)::value;
        // Only LayoutRight fields resolve to the reversed order (resolve_mapping).
        if constexpr (Reversed && !x_is_slowest<KokkosLayout>()) {
          throw std::invalid_argument("reversed policy order with LayoutLeft");
        } else {
          Kokkos::parallel_for("kstencil::laplacian::mdrange",
                               planned_policy<decltype(iterate)::value, decltype(bound)::value>(
                                   l.lower, l.upper, l.tile),
                               PointStencil<T, KokkosLayout, Reversed>{u, f, a});
        }
      });
}

}  // namespace laplacian_kernels
}  // namespace kstencil
