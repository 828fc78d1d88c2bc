#pragma once
// line (3D grids; the hosts' default): a work item updates one row along the fields' contiguous
// axis through restrict pointers, so that host compilers vectorise the update and the squares of
// its changes (32 lanes of double a row), where Kokkos 3.4's host MDRange runs the update point
// by point; Kokkos' reduction adds the rows' sums. The values go out through store_line:
// non-temporal whole cache lines on AVX hosts, as the Laplacian's host rows.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "arch/streams.hpp"
#include "core/field.hpp"
#include "core/policy.hpp"
#include "jacobi/formula.hpp"
#include "jacobi/jacobi.hpp"

namespace kstencil {
namespace jacobi_detail {

template <class T, class KokkosLayout, bool Streaming, bool RhsField, bool Norm>
struct LineUpdate {
  Field<const T, KokkosLayout> old_values;
  Field<T, KokkosLayout> new_values;
  Field<const T, KokkosLayout> rhs;  // RhsField: f at every point
  JacobiFormula<T> formula;
  T rhs_value;                       // else f everywhere (0 without a right-hand side)
  Kokkos::Array<int, 3> lo, extent;  // the box, local indices per axis x y z
  int block;                         // rows (y) a block: all planes of one block, then the next

  // Enumerators, not static data members: nvcc does not see those in device code once they are
  // used as array indices. chunk: the values a row computes before it stores them and sums their
  // squares; chunks start on the output's cache lines, so that only a row's two ends are partial.
  enum : int {
    right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value,
    fast = right ? 2 : 0,
    slow = right ? 0 : 2,
    chunk = 512,
    per_line = 64 / static_cast<int>(sizeof(T)),
    // Partial sums of the squares a row keeps: four vectors of eight doubles, four independent
    // chains of additions (one chain waits on each addition's latency).
    sum_lanes = 32
  };

  // Work item `item`: the rows of one block (`block` rows along y) in one plane of the slowest
  // axis, blocks outermost, so that a block's three planes stay in a core's cache while the sweep
  // moves on by a plane; its stores fenced once (a fence waits for every store before it).
  // With Norm, the sum of its squared changes.
  KOKKOS_INLINE_FUNCTION double update_item(const int item) const {
    const int planes = extent[slow];
    const int first = item / planes * block;
    const int last = first + block < extent[1] ? first + block : extent[1];
    int p[3];
    p[slow] = lo[slow] + item % planes;
    p[fast] = lo[fast];
    double sum = 0;
    for (int y = first; y < last; ++y) {
      p[1] = lo[1] + y;
      sum += update_row(p);
    }
    fence_streamed_stores<Streaming>();
    return sum;
  }

  // The row starting at local point p.
  KOKKOS_INLINE_FUNCTION double update_row(const int (&p)[3]) const {
    const T* const c = &old_values(p[0], p[1], p[2]);
    const std::ptrdiff_t sx = old_values.stride(0), sy = old_values.stride(1),
                         sz = old_values.stride(2);
    const T* KOKKOS_RESTRICT const xm = c - sx;
    const T* KOKKOS_RESTRICT const xp = c + sx;
    const T* KOKKOS_RESTRICT const ym = c - sy;
    const T* KOKKOS_RESTRICT const yp = c + sy;
    const T* KOKKOS_RESTRICT const zm = c - sz;
    const T* KOKKOS_RESTRICT const zp = c + sz;
    const T* KOKKOS_RESTRICT const centre = c;
    // The next plane along the slowest axis comes from memory, the rest from the caches.
    const T* const from_memory = right ? xp : zp;
    const T* KOKKOS_RESTRICT const f = RhsField ? &rhs(p[0], p[1], p[2]) : nullptr;
    T* KOKKOS_RESTRICT const out = &new_values(p[0], p[1], p[2]);
    // Local copies: read through `this`, the compiler reloads them after every store.
    const JacobiFormula<T> form = formula;
    const T uniform = rhs_value;
    const int n = extent[fast];
    double lanes[sum_lanes] = {};
    T values[chunk];
    int q = 0;
    int length = chunk - static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / sizeof(T) %
                                          static_cast<std::uintptr_t>(per_line));
    while (q < n) {
      if (length > n - q) length = n - q;
      const auto value = [&](const int k) {
        return form.three_d(xm[q + k], xp[q + k], ym[q + k], yp[q + k], zm[q + k], zp[q + k],
                            RhsField ? f[q + k] : uniform);
      };
      // A line ahead of the stream from memory for each line computed.
      int k = 0;
      for (; k + per_line <= length; k += per_line) {
        prefetch_stream(from_memory + q + k, default_single_stream_prefetch_bytes);
        for (int l = 0; l < per_line; ++l) values[k + l] = value(k + l);
      }
      for (; k < length; ++k) values[k] = value(k);
      if (Norm) {
        int m = 0;
        for (; m + sum_lanes <= length; m += sum_lanes)
          for (int l = 0; l < sum_lanes; ++l) {
            const double change =
                static_cast<double>(values[m + l]) - static_cast<double>(centre[q + m + l]);
            lanes[l] += change * change;
          }
        for (; m < length; ++m) {
          const double change = static_cast<double>(values[m]) - static_cast<double>(centre[q + m]);
          lanes[m % sum_lanes] += change * change;
        }
      }
      store_line<Streaming>(
          out + q, length, [&](const int v) { return values[v]; }, from_memory + q);
      q += length;
      length = chunk;
    }
    double sum = 0;
    for (int l = 0; l < sum_lanes; ++l) sum += lanes[l];
    return sum;
  }
};

template <class Update>
struct LineRows {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int item) const { update.update_item(item); }
};
template <class Update>
struct LineRowSums {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int item, double& sum) const {
    sum += update.update_item(item);
  }
};

// The update of the plan's box; with `norm` the sum of its squared changes into `sum` (a device
// scalar), without waiting.
template <class T, class KokkosLayout, class Sum>
void launch_line_update(const JacobiPlan& plan, const JacobiFormula<T>& formula,
                        const bool rhs_field, const Field<const T, KokkosLayout>& rhs,
                        const T rhs_value, const Field<const T, KokkosLayout>& old_values,
                        const Field<T, KokkosLayout>& new_values, const bool norm, const Sum& sum) {
  constexpr bool streaming = host_streaming_stores_compiled() && kernels_on_host;
  constexpr int fast = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value ? 2 : 0;
  const int block = plan.line_rows;
  const int items = plan.box_extent[fast] > 0
                        ? (plan.box_extent[1] + block - 1) / block * plan.box_extent[2 - fast]
                        : 0;
  const Kokkos::Array<int, 3> lo{plan.box_lo[0], plan.box_lo[1], plan.box_lo[2]};
  const Kokkos::Array<int, 3> extent{plan.box_extent[0], plan.box_extent[1], plan.box_extent[2]};
  const Kokkos::RangePolicy<Kokkos::IndexType<int>> policy(0, items);
  const auto launch = [&](auto field, auto norm) {
    constexpr bool F = decltype(field)::value, N = decltype(norm)::value;
    using Update = LineUpdate<T, KokkosLayout, streaming, F, N>;
    const Update update{old_values, new_values, rhs, formula, rhs_value, lo, extent, block};
    if constexpr (N)
      Kokkos::parallel_reduce("kstencil::jacobi::line_reduce", policy, LineRowSums<Update>{update},
                              sum);
    else
      Kokkos::parallel_for("kstencil::jacobi::line", policy, LineRows<Update>{update});
  };
  const auto with_norm = [&](auto field) {
    if (norm)
      launch(field, std::true_type{});
    else
      launch(field, std::false_type{});
  };
  if (rhs_field)
    with_norm(std::true_type{});
  else
    with_norm(std::false_type{});
}

}  // namespace jacobi_detail
}  // namespace kstencil
