#pragma once
// What every solver's plan does with a launch's tile: fill Kokkos' default entries in once and
// check the launch against the device, so that kernels launch the result as it is.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/exec_space.hpp"
#include "core/mapping.hpp"
#include "core/policy.hpp"

namespace kstencil {

struct PlannedTile {
  std::array<std::int64_t, 3> tile{1, 1, 1};  // policy order, every entry >= 1
  std::optional<std::string> problem;         // why `limits` cannot run the launch
};

// Why `limits` cannot run a launch over [lower, upper) with `tile` (policy order, resolved).
inline std::optional<std::string> launch_problem(const std::array<std::int64_t, 3>& tile,
                                                 const Index3& lower, const Index3& upper,
                                                 const ExecLimits& limits,
                                                 const int launch_bounds) {
  std::array<std::int64_t, 3> extents;
  for (int d = 0; d < 3; ++d) extents[d] = upper[d] - lower[d];
  if (auto why = tile_problem(tile, extents, limits, launch_bounds))
    return "policy tile " + format_triple(tile) + " over extents " + format_triple(extents) + ": " +
           *why;
  return std::nullopt;
}

// The tile a launch over [lower, upper) (policy order) of the policy type that `mapping` and
// `launch_bounds` select runs with, `tile`'s 0 entries (policy order) taken from Kokkos.
inline PlannedTile plan_tile(const Mapping& mapping, const int launch_bounds, const Index3& lower,
                             const Index3& upper, const std::array<std::int64_t, 3>& tile,
                             const ExecLimits& limits) {
  PlannedTile planned;
  dispatch_traits(mapping, launch_bounds, [&](auto, auto iterate, auto bound) {
    planned.tile =
        resolved_tile<decltype(iterate)::value, decltype(bound)::value>(lower, upper, tile);
  });
  planned.problem = launch_problem(planned.tile, lower, upper, limits, launch_bounds);
  return planned;
}

}  // namespace kstencil
