#pragma once
// The blocked Jacobi update: the Laplacian's blocked kernel (register blocks along y and the
// slowest axis, y parts, row ends, evict-first stores; src/laplacian/kernels/blocked.hpp) with
// Jacobi's point. With the norm, each work item sums its points' squared changes (in T: float's
// conversions to double cost more than the sums; JacobiPlan::sum_points) and writes the sum to
// its own slot in double; a second, small reduction adds the slots (seed 004's block-level
// partial sums and one global combination, without Kokkos 3.4's grid-capped reduction over the
// grid). On CUDA the lanes of a warp add their sums first and write one (JacobiPlan::sum_lanes).
#include <cstdint>
#include <string>

#include "core/warp_sum.hpp"
#include "jacobi/formula.hpp"
#include "laplacian/kernels/blocked.hpp"

namespace kstencil {
namespace jacobi_detail {

// FieldRhs: f from the rhs field; else the scalar rhs_value (the uniform f, or 0 without one).
template <class T, class KokkosLayout, bool Sums, bool FieldRhs>
struct BlockedPoint {
  JacobiFormula<T> formula;                              // on a 3D grid: three_d
  laplacian_kernels::StencilInput<T, KokkosLayout> rhs;  // FieldRhs only
  T rhs_value;
  Kokkos::View<double*> item_sums;  // one per `lanes` work items of the launch
  int y_blocks, c_lower, c_items;   // the launch's extents: its slots' order
  int lanes;                        // 1, or warp_sum_lanes: each warp whole, along one row

  static constexpr bool sums = Sums;
  using Sum = T;

  KOKKOS_FORCEINLINE_FUNCTION T operator()(const T, const T s_minus, const T s_plus,
                                           const T y_minus, const T y_plus, const T c_minus,
                                           const T c_plus, const int s, const int j,
                                           const int c) const {
    T f = rhs_value;
    if constexpr (FieldRhs) f = laplacian_kernels::at_slow_y_contiguous(rhs, s, j, c);
    return x_is_slowest<KokkosLayout>()
               ? formula.three_d(s_minus, s_plus, y_minus, y_plus, c_minus, c_plus, f)
               : formula.three_d(c_minus, c_plus, y_minus, y_plus, s_minus, s_plus, f);
  }
  // A row end is a boundary or ghost point: it keeps its value.
  template <class Load>
  KOKKOS_FORCEINLINE_FUNCTION T row_end(const Load& own_value) const {
    return own_value();
  }
  KOKKOS_FORCEINLINE_FUNCTION void add(T& sum, const T value, const T old) const {
    const T change = value - old;
    sum += change * change;
  }
  KOKKOS_FORCEINLINE_FUNCTION void finish(const int slow_item, const int block, const int c,
                                          const T item_sum) const {
    const double sum = item_sum;
    const std::int64_t row = static_cast<std::int64_t>(slow_item) * y_blocks + block;
    const int item = c - c_lower;
    if (lanes == 1) {
      item_sums(row * c_items + item) = sum;
      return;
    }
    const double warp = warp_sum(sum);
    if (item % lanes == 0) item_sums(row * (c_items / lanes) + item / lanes) = warp;
  }
  // What a Jacobi plan asks for, the Laplacian's blocked defaults: 4 x 2 points per block in runs
  // (pairs, float quads), or one point a work item in 8 x 1 (float layout right 4 x 2),
  // evict-first stores. Each kernel is compiled per launch trait, precision and layout: only these
  // keep CI's build within its time (docs/KOKKOS.md, "Build times").
  template <int M, int MS, int MC, bool Streaming>
  static constexpr bool compiled() {
    if constexpr (MC == 4) return sizeof(T) == 4 && Streaming && M == 4 && MS == 2;
    if constexpr (MC == 2) return Streaming && M == 4 && MS == 2;
    return Streaming && ((M == 8 && MS == 1) || (M == 4 && MS == 2));
  }
  static std::string compiled_kernels() {
    return "Jacobi's blocked kernel is compiled for 8 x 1 and 4 x 2 points per block with "
           "streaming stores (in runs along the contiguous axis, pairs or float quads: 4 x 2)";
  }
};

// The slots BlockedPoint writes: one per `sum_lanes` work items of the launch.
inline std::int64_t blocked_slots(const LaplacianLaunch& l, const int sum_lanes) {
  std::int64_t items = 1;
  for (int d = 0; d < 3; ++d) items *= l.upper[d] - l.lower[d];
  return items / sum_lanes;
}

// old -> new over `plan` (a blocked Laplacian plan over the update box of a 3D grid); with
// `item_sums` (at least blocked_slots(*plan.launch, sum_lanes) of them), the sums of squared
// changes of each `sum_lanes` work items. f: the `rhs` field where `field_rhs`, else `rhs_value`
// (0 without a right-hand side).
template <class T, class KokkosLayout>
void launch_blocked_update(const LaplacianPlan& plan, const int sum_lanes,
                           const JacobiFormula<T>& formula, const bool field_rhs,
                           const Field<const T, KokkosLayout>& rhs, const T rhs_value,
                           const Field<const T, KokkosLayout>& old_values,
                           const Field<T, KokkosLayout>& new_values,
                           const Kokkos::View<double*>& item_sums) {
  const LaplacianLaunch& l = *plan.launch;
  const Index3 lower = to_axis_order(plan.mapping, l.lower);
  const Index3 upper = to_axis_order(plan.mapping, l.upper);
  const int contiguous = plan.axes.contiguous;
  const auto launch = [&](auto sums, auto field) {
    constexpr bool Sums = decltype(sums)::value, FieldRhs = decltype(field)::value;
    laplacian_kernels::launch_blocked<T, KokkosLayout>(
        Sums ? "kstencil::jacobi::update_blocked_sums" : "kstencil::jacobi::update_blocked", plan,
        BlockedPoint<T, KokkosLayout, Sums, FieldRhs>{
            formula, rhs, rhs_value, item_sums, static_cast<int>(upper[1] - lower[1]),
            static_cast<int>(lower[contiguous]),
            static_cast<int>(upper[contiguous] - lower[contiguous]), sum_lanes},
        old_values, new_values);
  };
  const auto with_rhs = [&](auto sums) {
    if (field_rhs)
      launch(sums, std::true_type{});
    else
      launch(sums, std::false_type{});
  };
  if (item_sums.extent(0) > 0)
    with_rhs(std::true_type{});
  else
    with_rhs(std::false_type{});
}

}  // namespace jacobi_detail
}  // namespace kstencil
