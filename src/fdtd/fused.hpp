#pragma once
// The fused variant's step on hosts: H and then E in one sweep over each tile's planes and rows,
// so that a step reads each field from memory once instead of twice (separate updates: E and H
// each read both), and its policy.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "fdtd/kernels.hpp"

namespace kstencil {
namespace fdtd_detail {

// The line variant's tiles (planes along the slowest axis x rows along y), counted and cut.
struct FusedTiles {
  int lower[2], upper[2];
  std::int64_t size[2], count[2];

  explicit FusedTiles(const FdtdLaunch& l) {
    for (int d = 0; d < 2; ++d) {
      lower[d] = static_cast<int>(l.lower[d]);
      upper[d] = static_cast<int>(l.upper[d]);
      size[d] = l.tile[d] > 0 ? l.tile[d] : 1;
      count[d] = (upper[d] - lower[d] + size[d] - 1) / size[d];
    }
  }
  std::int64_t total() const { return count[0] * count[1]; }
  // Tile t's planes [s0, s1) and rows [j0, j1).
  KOKKOS_INLINE_FUNCTION void bounds(const std::int64_t t, int& s0, int& s1, int& j0,
                                     int& j1) const {
    const std::int64_t ts = t / count[1], tj = t % count[1];
    s0 = lower[0] + static_cast<int>(ts * size[0]);
    j0 = lower[1] + static_cast<int>(tj * size[1]);
    s1 = s0 + static_cast<int>(size[0]) < upper[0] ? s0 + static_cast<int>(size[0]) : upper[0];
    j1 = j0 + static_cast<int>(size[1]) < upper[1] ? j0 + static_cast<int>(size[1]) : upper[1];
  }
};

// H reads E at its cell and the next along each axis (the old E); E reads H at its cell and the
// one before (the new H). So within a tile, plane by plane and row by row, H's row and then E's
// row give the separate updates' values, except that H's rows on the tile's last plane and last
// row read the next tile's old E: `faces` updates those first, for every tile, and `sweep` then
// the rest of H and all of E, every tile on its own.
template <class UpdateH, class UpdateE>
struct FusedStep {
  UpdateH h;
  UpdateE e;
  FusedTiles tiles;
  int begin, end;
  Prefetch prefetch;
  bool faces;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    int s0, s1, j0, j1;
    tiles.bounds(t, s0, s1, j0, j1);
    if (faces) {
      for (int s = s0; s < s1 - 1; ++s) h.line(s, j1 - 1, begin, end, prefetch);
      for (int j = j0; j < j1; ++j) h.line(s1 - 1, j, begin, end, prefetch);
      return;
    }
    for (int s = s0; s < s1; ++s)
      for (int j = j0; j < j1; ++j) {
        if (s < s1 - 1 && j < j1 - 1) h.line(s, j, begin, end, prefetch);
        e.template line<true>(s, j, begin, end, prefetch);
      }
  }
};

// One step (H^(n-1/2) -> H^(n+1/2), then E^n -> E^(n+1)) over the plan's cells of a rank that
// has no neighbours: the same values as the line variant's two updates.
template <class UpdateH, class UpdateE>
void launch_fused_step(const FdtdPlan& plan, const UpdateH& h, const UpdateE& e) {
  const FdtdLaunch& l = plan.launch;
  const FusedTiles tiles(l);
  // A tile a work item, each thread its run of tiles in order (as the line variant's MDRange).
  const Kokkos::RangePolicy<Kokkos::Schedule<Kokkos::Static>, Kokkos::IndexType<std::int64_t>>
      policy(0, tiles.total());
  FusedStep<UpdateH, UpdateE> step{
      h, e, tiles, l.loop_start, l.loop_start + l.loop_length, plan.config.prefetch, true};
  Kokkos::parallel_for("kstencil::fdtd::fused_faces", policy, step);
  step.faces = false;
  Kokkos::parallel_for("kstencil::fdtd::fused_sweep", policy, step);
}

}  // namespace fdtd_detail
}  // namespace kstencil
