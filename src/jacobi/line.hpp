#pragma once
// line (3D grids; the hosts' default): a work item updates the rows of a block of rows (y) in a
// group of `Planes` consecutive planes of the slowest axis through stencil_lines
// (arch/streams.hpp): on AVX2 and AVX-512 hosts the planes' rows together, vectorised by hand,
// their changes squared and summed over the planes in T, then in double vectors, the values out
// through non-temporal whole cache lines; elsewhere row by row, vectorised by the compiler, squares
// in 32 lanes of double (Kokkos 3.4's host MDRange, which reduce runs, updates point by point).
// Kokkos' reduction adds the work items' sums.
#include <cstddef>
#include <stdexcept>
#include <type_traits>

#include "arch/streams.hpp"
#include "core/field.hpp"
#include "core/policy.hpp"
#include "jacobi/formula.hpp"
#include "jacobi/jacobi.hpp"
#include "laplacian/kernels/common.hpp"

namespace kstencil {
namespace jacobi_detail {

template <class T, class KokkosLayout, bool Streaming, bool RhsField, bool Norm, int Planes>
struct LineUpdate {
  Field<const T, KokkosLayout> old_values;
  Field<T, KokkosLayout> new_values;
  Field<const T, KokkosLayout> rhs;  // RhsField: f at every point, laid out as the iterate
  JacobiFormula<T> formula;
  T rhs_value;                       // else f everywhere (0 without a right-hand side)
  Kokkos::Array<int, 3> lo, extent;  // the box, local indices per axis x y z
  int rows;                          // rows (y) a work item
  bool blocks_outer;                 // the policy's indices (block, group), else (group, block)
  Prefetch prefetch;                 // the rows' prefetches of their streams from memory
  RowEnds ends;                      // none, or input where no part updates the rows' ends

  // Enumerators, not static data members: nvcc does not see those in device code once they are
  // used as array indices.
  enum : int {
    right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value,
    fast = right ? 2 : 0,
    slow = right ? 0 : 2
  };

  // The work item of `group` (Planes planes from group * Planes) and `block` (rows from block *
  // rows), from the policy's indices; its stores fenced once (a fence waits for every store before
  // it). With Norm, the sum of its squared changes.
  KOKKOS_INLINE_FUNCTION double update_item(const int i0, const int i1) const {
    const int group = blocks_outer ? i1 : i0, block = blocks_outer ? i0 : i1;
    const int first = block * rows;
    const int last = first + rows < extent[1] ? first + rows : extent[1];
    const int first_plane = group * Planes;
    const int planes = first_plane + Planes <= extent[slow] ? Planes : extent[slow] - first_plane;
    int p[3];
    p[slow] = lo[slow] + first_plane;
    p[fast] = lo[fast];
    const std::ptrdiff_t ss = old_values.stride(static_cast<int>(slow)), sy = old_values.stride(1);
    p[1] = lo[1] + first;
    const JacobiPoint<T, RhsField> point{formula, RhsField ? &rhs(p[0], p[1], p[2]) : nullptr,
                                         rhs_value};
    const double sum = stencil_lines<Streaming, Planes, KokkosLayout, Norm>(
        &old_values(p[0], p[1], p[2]), &new_values(p[0], p[1], p[2]), extent[fast], last - first,
        planes, ss, sy, point, ends, prefetch);
    fence_streamed_stores<Streaming>();
    return sum;
  }
};

template <class Update>
struct LineRows {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int i0, const int i1) const {
    update.update_item(i0, i1);
  }
};
template <class Update>
struct LineRowSums {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int i0, const int i1, double& sum) const {
    sum += update.update_item(i0, i1);
  }
};

// The update of the plan's box; with `norm` the sum of its squared changes into `sum` (a device
// scalar), without waiting. The three fields share one layout (the rows' planes and rows lie the
// same strides apart in each).
template <class T, class KokkosLayout, class Sum>
void launch_line_update(const JacobiPlan& plan, const JacobiFormula<T>& formula,
                        const bool rhs_field, const Field<const T, KokkosLayout>& rhs,
                        const T rhs_value, const Field<const T, KokkosLayout>& old_values,
                        const Field<T, KokkosLayout>& new_values, const bool norm, const Sum& sum) {
  constexpr bool streaming = host_streaming_stores_compiled() && kernels_on_host;
  constexpr int fast = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value ? 2 : 0;
  for (int d = 0; d < 3; ++d)
    if (new_values.stride(d) != old_values.stride(d) ||
        (rhs_field && rhs.stride(d) != old_values.stride(d)))
      throw std::logic_error("jacobi line: the iterates and the right-hand side differ in layout");
  const int rows = plan.line_rows, planes = plan.line_planes;
  // Work items: groups of planes by blocks of rows in the plan's tile (as the Laplacian's line),
  // or blocks of rows by groups of planes, one work item a tile, split evenly over the threads.
  using Policy =
      Kokkos::MDRangePolicy<Kokkos::DefaultExecutionSpace,
                            Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                            Kokkos::IndexType<int>>;
  const bool empty = plan.box_extent[fast] <= 0;
  const int groups = empty ? 0 : (plan.box_extent[2 - fast] + planes - 1) / planes;
  const int blocks = empty ? 0 : (plan.box_extent[1] + rows - 1) / rows;
  const bool outer = plan.line_blocks_outer;
  const Policy policy({0, 0}, {outer ? blocks : groups, outer ? groups : blocks},
                      {static_cast<int>(plan.line_tile[0]), static_cast<int>(plan.line_tile[1])});
  const Kokkos::Array<int, 3> lo{plan.box_lo[0], plan.box_lo[1], plan.box_lo[2]};
  const Kokkos::Array<int, 3> extent{plan.box_extent[0], plan.box_extent[1], plan.box_extent[2]};
  const auto launch = [&](auto field, auto norm, auto planes_per_item) {
    constexpr bool F = decltype(field)::value, N = decltype(norm)::value;
    using Update = LineUpdate<T, KokkosLayout, streaming, F, N, decltype(planes_per_item)::value>;
    const Update update{
        old_values, new_values,         rhs,           formula, rhs_value, lo, extent, rows,
        outer,      plan.line_prefetch, plan.line_ends};
    if constexpr (N)
      Kokkos::parallel_reduce("kstencil::jacobi::line_reduce", policy, LineRowSums<Update>{update},
                              sum);
    else
      Kokkos::parallel_for("kstencil::jacobi::line", policy, LineRows<Update>{update});
  };
  const auto with_planes = [&](auto field, auto norm) {
    if (!laplacian_kernels::dispatch_constant<1, 2, 4>(planes,
                                                       [&](auto p) { launch(field, norm, p); }))
      throw std::logic_error("jacobi line: planes per work item must be 1, 2 or 4");
  };
  const auto with_norm = [&](auto field) {
    if (norm)
      with_planes(field, std::true_type{});
    else
      with_planes(field, std::false_type{});
  };
  if (rhs_field)
    with_norm(std::true_type{});
  else
    with_norm(std::false_type{});
}

}  // namespace jacobi_detail
}  // namespace kstencil
