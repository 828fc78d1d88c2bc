#pragma once
// From the user's words (View layout, iteration order, tile per axis) to a Kokkos MDRange policy:
// which array index goes to which policy dimension, the Iterate pattern, the tile in policy order,
// and whether the resulting launch is valid on the execution space.
//
// On CUDA/HIP Kokkos maps policy dimension 0 to threadIdx.x whatever Iterate says, so the
// contiguous index must be policy dimension 0 to coalesce; on the host the fastest loop is the
// inner one of the Iterate pattern. "auto" picks the order that makes the contiguous index fastest
// on the space.
#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/exec_space.hpp"
#include "core/grid.hpp"

namespace kstencil {

enum class Layout { left, right };  // Kokkos::LayoutLeft (x contiguous) / LayoutRight (z)
enum class IterOrder { automatic, left, right };

Layout parse_layout(const std::string& word);
IterOrder parse_iter_order(const std::string& word);
std::string to_string(Layout layout);
std::string to_string(IterOrder order);  // as decks write it: auto, left, right

template <class KokkosLayout>
constexpr Layout layout_of() {
  return std::is_same<KokkosLayout, Kokkos::LayoutLeft>::value ? Layout::left : Layout::right;
}

// A resolved mapping. reversed: policy dimensions are (k, j, i) instead of (i, j, k).
struct Mapping {
  bool reversed = false;
  bool iterate_right = false;  // Kokkos::Iterate::Right (else Left) for outer and inner

  // Axis (0 = x, 1 = y, 2 = z) that policy dimension d iterates over.
  int axis_of_policy_dim(int d) const { return reversed ? 2 - d : d; }
  // "policy (i,j,k), Iterate::Right"
  std::string describe() const;
  friend bool operator==(const Mapping& a, const Mapping& b) {
    return a.reversed == b.reversed && a.iterate_right == b.iterate_right;
  }
};

Mapping resolve_mapping(Layout layout, IterOrder order, bool gpu);

// Reorders a per-axis (x, y, z) triple into policy-dimension order and back.
template <class T>
std::array<T, 3> to_policy_order(const Mapping& m, const std::array<T, 3>& per_axis) {
  return m.reversed ? std::array<T, 3>{per_axis[2], per_axis[1], per_axis[0]} : per_axis;
}
template <class T>
std::array<T, 3> to_axis_order(const Mapping& m, const std::array<T, 3>& per_dim) {
  return to_policy_order(m, per_dim);  // the permutation is its own inverse
}

// Why a launch of `tile` (policy order, every entry >= 1) over `extents` (policy order) is invalid
// on the space described by `limits` with launch bounds `launch_bounds` (0 = none); nullopt if
// valid. Checked: threads per block, per-dimension block limits (Kokkos silently skips work with
// more than 64 threads in block z, issue #8239), and grid-dimension limits (issue #4192).
std::optional<std::string> tile_problem(const std::array<std::int64_t, 3>& tile,
                                        const std::array<std::int64_t, 3>& extents,
                                        const ExecLimits& limits, int launch_bounds);

std::string format_triple(const std::array<std::int64_t, 3>& v);

// The MDRange policy type for an Iterate pattern and launch bound (0 = none).
template <class ExecSpace, Kokkos::Iterate Iter, unsigned LaunchBound>
using MDPolicy3 =
    Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3, Iter, Iter>, Kokkos::IndexType<int>,
                          Kokkos::LaunchBounds<LaunchBound, (LaunchBound > 0 ? 1 : 0)>>;

}  // namespace kstencil
