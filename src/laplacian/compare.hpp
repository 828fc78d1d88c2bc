#pragma once
// Comparison of a computed Laplacian with expected values on the host, used by verification.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "laplacian/laplacian.hpp"

namespace kstencil {
namespace laplacian_detail {

// Whether p lies just outside `update` along `axis` (one before its low or at its high end) and
// inside it along the other two axes.
inline bool row_end(const Box& update, const int axis, const Index3& p) {
  // A box of no points along the axis has no rows, so no row ends (a rank holding no interior
  // point along it).
  if (axis < 0 || update.extent(axis) == 0 ||
      (p[axis] != update.lo[axis] - 1 && p[axis] != update.hi[axis]))
    return false;
  for (int d = 0; d < 3; ++d)
    if (d != axis && (p[d] < update.lo[d] || p[d] >= update.hi[d])) return false;
  return true;
}

struct Comparison {
  double max_diff = 0;
  std::int64_t mismatches = 0;
  std::int64_t untouched_violations = 0;
};

// Compares f (on the host) with `expected(i, j, k)` at the update box and checks that every other
// point still holds NaN, except where a kernel zeroes row ends (zeroed_row_end_axis >= 0): the
// points just before and after the update box along that axis, beside an updated row, must hold
// exactly 0. Plain loops on the host execution space: independent of the kernels. Along the
// layout's rows (a plane of the slowest axis a work item): across them, a 512^3 check took seconds.
template <class T, class KokkosLayout, class Expected>
Comparison compare_on_host(const Field<T, KokkosLayout>& f, const Grid& grid, Expected&& expected,
                           const int zeroed_row_end_axis = -1) {
  const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  const Box update = grid.to_local(laplacian_update_box(grid));
  const Index3 n = grid.local_extents();
  constexpr bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
  constexpr int slow = right ? 0 : 2, fast = right ? 2 : 0;
  std::vector<Comparison> planes(n[slow]);
  Kokkos::parallel_for(
      "kstencil::laplacian::compare",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, static_cast<int>(n[slow])),
      [&](const int plane) {
        auto& c = planes[plane];
        Index3 p;
        p[slow] = plane;
        for (p[1] = 0; p[1] < n[1]; ++p[1])
          for (p[fast] = 0; p[fast] < n[fast]; ++p[fast]) {
            const Index i = p[0], j = p[1], k = p[2];
            const T value = fh(i, j, k);
            if (!update.contains({i, j, k})) {
              c.untouched_violations += row_end(update, zeroed_row_end_axis, {i, j, k})
                                            ? !(value == T(0))
                                            : !std::isnan(value);
              continue;
            }
            const T want = expected(i, j, k);
            const double diff = std::abs(static_cast<double>(value) - static_cast<double>(want));
            c.mismatches += !(value == want);
            c.max_diff = std::isnan(diff) ? std::numeric_limits<double>::infinity()
                                          : std::max(c.max_diff, diff);
          }
      });
  Comparison total;
  for (const auto& c : planes) {
    total.max_diff = std::max(total.max_diff, c.max_diff);
    total.mismatches += c.mismatches;
    total.untouched_violations += c.untouched_violations;
  }
  return total;
}

}  // namespace laplacian_detail
}  // namespace kstencil
