#pragma once
// Comparison of a computed Laplacian with expected values on the host, used by verification.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "laplacian/laplacian.hpp"

namespace kstencil {
namespace laplacian_detail {

// Whether p lies just outside `update` along `axis` (one before its low or at its high end) and
// inside it along the other two axes.
inline bool row_end(const Box& update, const int axis, const Index3& p) {
  if (axis < 0 || (p[axis] != update.lo[axis] - 1 && p[axis] != update.hi[axis])) return false;
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
// exactly 0. Plain loops on the host execution space: independent of the kernels.
template <class T, class KokkosLayout, class Expected>
Comparison compare_on_host(const Field<T, KokkosLayout>& f, const Grid& grid, Expected&& expected,
                           const int zeroed_row_end_axis = -1) {
  const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  const Box update = grid.to_local(laplacian_update_box(grid));
  const Index3 n = grid.local_extents();
  std::vector<Comparison> planes(n[2]);
  Kokkos::parallel_for(
      "kstencil::laplacian::compare",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, static_cast<int>(n[2])),
      [&](const int k) {
        auto& c = planes[k];
        for (Index j = 0; j < n[1]; ++j)
          for (Index i = 0; i < n[0]; ++i) {
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
