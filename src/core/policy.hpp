#pragma once
// MDRange policies from a resolved mapping, a per-dimension tile and a launch bound, shared by the
// solvers' kernels: the trait dispatch (runtime choice -> compile-time policy type) lives here
// once.
#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "core/grid.hpp"
#include "core/mapping.hpp"

namespace kstencil {

template <Kokkos::Iterate Iter, unsigned LaunchBound>
using Policy3 = MDPolicy3<Kokkos::DefaultExecutionSpace, Iter, LaunchBound>;

// The tile Kokkos uses over [lower, upper) (policy order) when 0 entries of `tile` take Kokkos'
// defaults.
template <Kokkos::Iterate Iter, unsigned LaunchBound>
std::array<std::int64_t, 3> resolved_tile(const Index3& lower, const Index3& upper,
                                          const std::array<std::int64_t, 3>& tile) {
  using P = Policy3<Iter, LaunchBound>;
  typename P::point_type lo, hi;
  for (int d = 0; d < 3; ++d) {
    lo[d] = static_cast<int>(lower[d]);
    hi[d] = static_cast<int>(upper[d]);
  }
  const P defaults(lo, hi);
  std::array<std::int64_t, 3> merged;
  for (int d = 0; d < 3; ++d) merged[d] = tile[d] > 0 ? tile[d] : defaults.m_tile[d];
  return merged;
}

// The policy of a planned launch over [lower, upper) with `tile` as resolved (every entry >= 1),
// all in policy order: nothing is resolved again.
template <Kokkos::Iterate Iter, unsigned LaunchBound>
Policy3<Iter, LaunchBound> planned_policy(const Index3& lower, const Index3& upper,
                                          const std::array<std::int64_t, 3>& tile) {
  using P = Policy3<Iter, LaunchBound>;
  typename P::point_type lo, hi;
  typename P::tile_type t;
  for (int d = 0; d < 3; ++d) {
    lo[d] = static_cast<int>(lower[d]);
    hi[d] = static_cast<int>(upper[d]);
    t[d] = static_cast<int>(tile[d]);
  }
  return P(lo, hi, t);
}

// A policy over the array indices (i, j, k) of fields of `KokkosLayout`, for set-up and checks
// rather than timed kernels: iterating along the layout's contiguous index keeps a host thread in
// its rows (Kokkos' default order, Iterate::Right, strides through LayoutLeft fields on hosts).
template <class KokkosLayout>
inline constexpr Kokkos::Iterate contiguous_fastest =
    std::is_same<KokkosLayout, Kokkos::LayoutRight>::value ? Kokkos::Iterate::Right
                                                           : Kokkos::Iterate::Left;
template <class KokkosLayout>
using FieldPolicy3 = Kokkos::MDRangePolicy<
    Kokkos::Rank<3, contiguous_fastest<KokkosLayout>, contiguous_fastest<KokkosLayout>>,
    Kokkos::IndexType<int>>;

// Whether kernels run on the host (OpenMP, Serial) rather than on a GPU.
inline constexpr bool kernels_on_host =
    std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value;

// Whether each GPU kernel is compiled with one launch bound: CI's compile checks (the *-check
// presets, KSTENCIL_COMPILE_CHECK), whose builds nothing runs: a kernel's body is the same for
// every bound, so one instance checks what five would.
#ifdef KSTENCIL_COMPILE_CHECK
inline constexpr bool one_launch_bound = true;
#else
inline constexpr bool one_launch_bound = false;
#endif

// The launch bound a kernel is compiled with: host back ends ignore launch bounds, so there every
// bound is the unbounded 0 and each kernel is compiled once instead of five times; compile checks
// take the GPU default, 128, for every bound.
template <unsigned LaunchBound>
using CompiledLaunchBound = std::integral_constant<unsigned, kernels_on_host    ? 0u
                                                             : one_launch_bound ? 128u
                                                                                : LaunchBound>;

// Calls body(std::integral_constant<unsigned, LaunchBound>) for the runtime launch bound.
template <class Body>
void dispatch_launch_bound(int launch_bounds, Body&& body) {
  switch (launch_bounds) {
    case 0:
      return body(CompiledLaunchBound<0>{});
    case 128:
      return body(CompiledLaunchBound<128>{});
    case 256:
      return body(CompiledLaunchBound<256>{});
    case 512:
      return body(CompiledLaunchBound<512>{});
    case 1024:
      return body(CompiledLaunchBound<1024>{});
  }
  throw std::invalid_argument("launch bounds must be 0, 128, 256, 512 or 1024");
}

// Calls body(std::integral_constant<bool, Reversed>, std::integral_constant<Iterate, Iter>,
// std::integral_constant<unsigned, LaunchBound>) for the runtime mapping and launch bound.
template <class Body>
void dispatch_traits(const Mapping& mapping, int launch_bounds, Body&& body) {
  auto with_bound = [&](auto reversed, auto iterate) {
    dispatch_launch_bound(launch_bounds, [&](auto bound) { body(reversed, iterate, bound); });
  };
  using Left = std::integral_constant<Kokkos::Iterate, Kokkos::Iterate::Left>;
  using Right = std::integral_constant<Kokkos::Iterate, Kokkos::Iterate::Right>;
  if (mapping.reversed) {
    if (mapping.iterate_right)
      throw std::invalid_argument("reversed policy order is only used with Iterate::Left");
    return with_bound(std::true_type{}, Left{});
  }
  if (mapping.iterate_right) return with_bound(std::false_type{}, Right{});
  return with_bound(std::false_type{}, Left{});
}

}  // namespace kstencil
