#pragma once
// Index boxes and the grid description shared by every solver.
//
// Points are indexed globally by (i, j, k) along (x, y, z), 0 <= i < nx. A rank owns a box of
// global points and allocates it grown by ghost layers where a neighbour exists; physical boundary
// points belong to the owning rank. With one rank, owned == global and there are no ghosts, so
// boundary points are stored and act as the halo of the stencil.
#include <algorithm>
#include <array>
#include <cstdint>

namespace kstencil {

using Index = std::int64_t;
using Index3 = std::array<Index, 3>;
using Real3 = std::array<double, 3>;

// Half-open box [lo, hi) of point indices.
struct Box {
  Index3 lo{0, 0, 0};
  Index3 hi{0, 0, 0};

  Index extent(int d) const { return std::max<Index>(hi[d] - lo[d], 0); }
  Index3 extents() const { return {extent(0), extent(1), extent(2)}; }
  Index size() const { return extent(0) * extent(1) * extent(2); }
  bool empty() const { return size() == 0; }
  bool contains(const Index3& p) const {
    for (int d = 0; d < 3; ++d)
      if (p[d] < lo[d] || p[d] >= hi[d]) return false;
    return true;
  }
  Box grown(Index width) const { return grown({width, width, width}); }
  Box grown(const Index3& width) const {
    Box b = *this;
    for (int d = 0; d < 3; ++d) {
      b.lo[d] -= width[d];
      b.hi[d] += width[d];
    }
    return b;
  }
  Box intersect(const Box& o) const {
    Box b;
    for (int d = 0; d < 3; ++d) {
      b.lo[d] = std::max(lo[d], o.lo[d]);
      b.hi[d] = std::max(b.lo[d], std::min(hi[d], o.hi[d]));
    }
    return b;
  }
  // This box in the index space whose origin is `origin` (e.g. global -> local).
  Box shifted_to(const Index3& origin) const {
    Box b = *this;
    for (int d = 0; d < 3; ++d) {
      b.lo[d] -= origin[d];
      b.hi[d] -= origin[d];
    }
    return b;
  }
  friend bool operator==(const Box& a, const Box& b) { return a.lo == b.lo && a.hi == b.hi; }
};

struct Grid {
  Index3 points{0, 0, 0};  // global number of points per axis
  Real3 origin{0, 0, 0};   // coordinate of point (0, 0, 0)
  Real3 spacing{1, 1, 1};  // hx, hy, hz
  Box owned;               // points this rank owns, global indices
  Box allocated;           // owned grown by ghost layers towards neighbours, global indices

  // A single-rank grid: owns everything, no ghosts.
  static Grid whole(const Index3& points, const Real3& origin, const Real3& spacing) {
    Grid g;
    g.points = points;
    g.origin = origin;
    g.spacing = spacing;
    g.owned = Box{{0, 0, 0}, points};
    g.allocated = g.owned;
    return g;
  }

  Box global() const { return Box{{0, 0, 0}, points}; }
  // Points whose 7-point stencil lies inside the domain.
  Box interior() const { return global().grown(-1); }
  Index3 local_extents() const { return allocated.extents(); }
  // Global box expressed in this rank's local (allocated-array) indices.
  Box to_local(const Box& global_box) const { return global_box.shifted_to(allocated.lo); }
  double coordinate(int axis, Index global_index) const {
    return origin[axis] + static_cast<double>(global_index) * spacing[axis];
  }
};

}  // namespace kstencil
