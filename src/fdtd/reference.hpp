#pragma once
// An independent host implementation of the Yee update (plain loops over x-fastest arrays, planes
// on the host's threads), to verify the Kokkos kernels bitwise: it starts from a solver's state
// over a region of the grid (every rank's part, gathered on rank 0) and applies the same formulas
// in the same order. Values near the region's cut faces go stale as the steps go on; the rest (the
// trusted box) matches the whole grid's update bitwise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/decomposition.hpp"
#include "fdtd/fdtd.hpp"
#include "fdtd/kernels.hpp"

namespace kstencil {
namespace fdtd_reference {

// Collective: `field`'s values over `box` (global indices), on rank 0 x fastest; empty elsewhere.
// Each rank sends what it owns of the box, and only that crosses from its device.
template <class T, class KokkosLayout>
std::vector<T> gather_box(const Field<T, KokkosLayout>& field, const Grid& grid, const Box& box,
                          MPI_Comm comm) {
  const Box mine = grid.owned.intersect(box);
  return gather_boxes(box_to_host_x_fastest(field, grid, mine), mine, box, comm);
}

// The boxes (node indices, global) verification compares after `steps` steps, each with the region
// its reference must start from (the box grown by the steps' dependency cone). The boxes lie
// around the product of these planes per axis: both walls, the middle and every boundary between
// ranks of the process grid `dims`, so they hold the corners, edges and faces of the grid and of
// every rank's part; and around the point source, if any.
struct CheckedBox {
  Box region, box;
};
inline std::vector<CheckedBox> checked_boxes(const FdtdProblem& p, const Dims3& dims, int steps) {
  constexpr Index half_width = 4;
  const Box whole = p.nodes().global();
  std::set<Index> planes[3];
  for (int d = 0; d < 3; ++d) {
    planes[d] = {0, p.cells[d] / 2, p.cells[d]};
    for (int part = 1; part < dims[d]; ++part)
      planes[d].insert(split_range(whole.hi[d], dims[d], part)[0]);
  }
  std::vector<Index3> anchors;
  for (Index i : planes[0])
    for (Index j : planes[1])
      for (Index k : planes[2]) anchors.push_back({i, j, k});
  if (p.source) anchors.push_back(p.source->index);
  std::vector<CheckedBox> out;
  for (const Index3& a : anchors) {
    const Box box = Box{a, {a[0] + 1, a[1] + 1, a[2] + 1}}.grown(half_width).intersect(whole);
    // One node per step each way, and one more: HostYee::trusted.
    out.push_back({box.grown(steps + 1).intersect(whole), box});
  }
  return out;
}

template <class T>
class HostYee {
 public:
  // Collective over the solver's ranks; only rank 0's reference holds the state, over `region`
  // (node indices, global).
  template <class KokkosLayout>
  HostYee(const YeeSolver<T, KokkosLayout>& solver, const Box& region)
      : p_(solver.problem()), dt_(solver.dt()), step_(solver.steps_done()), region_(region) {
    const Grid& nodes = solver.nodes();
    nx_ = region_.extent(0);
    ny_ = region_.extent(1);
    const auto gather = [&](const Field<T, KokkosLayout>& f) {
      return gather_box(f, nodes, region_, solver.comm());
    };
    const auto& f = solver.fields();
    for (int c = 0; c < 3; ++c) {
      e_[c] = gather(f.e[c]);
      h_[c] = gather(f.h[c]);
    }
    arrays_ = p_.media.mode == MediaMode::arrays;
    if (arrays_) {
      ca_ = gather(f.ca);
      cb_ = gather(f.cb);
      db_ = gather(f.db);
    }
    const Material& m = p_.media.background;
    const auto c = fdtd_detail::coefficients_of(m.eps, m.mu, m.sigma, dt_);
    ca0_ = static_cast<T>(c.ca);
    cb0_ = static_cast<T>(c.cb);
    db0_ = static_cast<T>(c.db);
    for (int d = 0; d < 3; ++d) inverse_h_[d] = static_cast<T>(1 / p_.spacing[d]);
  }
  // Over the whole grid.
  template <class KokkosLayout>
  explicit HostYee(const YeeSolver<T, KokkosLayout>& solver)
      : HostYee(solver, solver.problem().nodes().global()) {}

  void run(std::int64_t steps) {
    if (e_[0].empty()) return;  // not rank 0
    for (std::int64_t s = 0; s < steps; ++s) step();
    steps_run_ += steps;
  }

  // The nodes whose values match the whole grid's update: a step stales one more node inward from
  // each face that cuts the grid (H reads E one node up, E reads H one node down); one more node
  // for margin. The grid's walls are the whole grid's too.
  Box trusted() const {
    const Index3 points = p_.nodes().global().hi;
    Box b = region_;
    for (int d = 0; d < 3; ++d) {
      if (b.lo[d] > 0) b.lo[d] += steps_run_ + 1;
      if (b.hi[d] < points[d]) b.hi[d] -= steps_run_ + 1;
    }
    return b.intersect(region_);
  }

  // Component c over `box` (within the region), x fastest.
  std::vector<T> values(int c, const Box& box) const {
    if (!(region_.intersect(box) == box))
      throw std::invalid_argument("HostYee: values outside the reference's region");
    const std::vector<T>& all = c < 3 ? e_[c] : h_[c - 3];
    const Index3 n = box.extents();
    std::vector<T> out(static_cast<std::size_t>(box.size()));
    planes(box.lo[2], box.hi[2], [&](const Index k) {
      std::size_t q = static_cast<std::size_t>(n[0] * n[1] * (k - box.lo[2]));
      for (Index j = box.lo[1]; j < box.hi[1]; ++j)
        for (Index i = box.lo[0]; i < box.hi[0]; ++i) out[q++] = all[at(i, j, k)];
    });
    return out;
  }

  // Component c (0-5) over its lattice, x fastest (the region must be the whole grid).
  std::vector<T> component(int c) const { return values(c, Box{{0, 0, 0}, component_dims(p_, c)}); }

  // `got` (component c over `box`, x fastest; `box` within the trusted nodes and the component's
  // lattice) against this state: the largest difference and how many values differ in any bit (a
  // NaN against itself counts).
  struct Comparison {
    double max_diff = 0;
    std::int64_t mismatches = 0;
  };
  Comparison compare(int c, const Box& box, const std::vector<T>& got) const {
    if (!(trusted().intersect(box) == box) ||
        !(Box{{0, 0, 0}, component_dims(p_, c)}.intersect(box) == box) ||
        got.size() != static_cast<std::size_t>(box.size()))
      throw std::invalid_argument("HostYee::compare: values outside the trusted nodes");
    const std::vector<T> want = values(c, box);
    Comparison total;
    for (std::size_t n = 0; n < want.size(); ++n) {
      total.max_diff = std::max(
          total.max_diff, std::abs(static_cast<double>(got[n]) - static_cast<double>(want[n])));
      total.mismatches += got[n] != want[n];
    }
    return total;
  }

 private:
  FdtdProblem p_;
  double dt_;
  std::int64_t step_, steps_run_ = 0;
  Box region_;
  Index nx_ = 0, ny_ = 0;
  bool arrays_ = false;
  std::vector<T> e_[3], h_[3], ca_, cb_, db_;
  T ca0_, cb0_, db0_, inverse_h_[3];

  std::size_t at(Index i, Index j, Index k) const {
    return static_cast<std::size_t>((i - region_.lo[0]) +
                                    nx_ * ((j - region_.lo[1]) + ny_ * (k - region_.lo[2])));
  }

  // plane(k) for k in [begin, end) on the host's threads.
  template <class Plane>
  static void planes(const Index begin, const Index end, const Plane& plane) {
    if (end <= begin) return;
    Kokkos::parallel_for(
        "kstencil::fdtd::reference",
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(begin,
                                                                                         end),
        plane);
  }

  void step() {
    const Index3& n = p_.cells;
    const T idx = inverse_h_[0], idy = inverse_h_[1], idz = inverse_h_[2];
    T* const ex = e_[0].data();
    T* const ey = e_[1].data();
    T* const ez = e_[2].data();
    T* const hx = h_[0].data();
    T* const hy = h_[1].data();
    T* const hz = h_[2].data();
    const T* const ca_all = ca_.data();
    const T* const cb_all = cb_.data();
    const T* const db_all = db_.data();
    const Index sx = 1, sy = nx_, sz = nx_ * ny_;
    // H at a node reads E one node up, E one node down: each updates the nodes whose neighbours
    // lie in the region (of the cells the whole grid updates).
    Index3 h_lo, h_hi, e_lo, e_hi;
    for (int d = 0; d < 3; ++d) {
      h_lo[d] = region_.lo[d];
      h_hi[d] = std::min(region_.hi[d] - 1, n[d]);
      e_lo[d] = region_.lo[d] + (region_.lo[d] > 0 ? 1 : 0);
      e_hi[d] = std::min(region_.hi[d], n[d]);
    }
    // A half-step's points read only the other field: its planes are independent.
    planes(h_lo[2], h_hi[2], [&](const Index k) {
      for (Index j = h_lo[1]; j < h_hi[1]; ++j)
        for (Index i = h_lo[0]; i < h_hi[0]; ++i) {
          const std::size_t q = at(i, j, k);
          const T db = arrays_ ? db_all[q] : db0_;
          hx[q] = hx[q] - db * ((ez[q + sy] - ez[q]) * idy - (ey[q + sz] - ey[q]) * idz);
          hy[q] = hy[q] - db * ((ex[q + sz] - ex[q]) * idz - (ez[q + sx] - ez[q]) * idx);
          hz[q] = hz[q] - db * ((ey[q + sx] - ey[q]) * idx - (ex[q + sy] - ex[q]) * idy);
        }
    });
    planes(e_lo[2], e_hi[2], [&](const Index k) {
      for (Index j = e_lo[1]; j < e_hi[1]; ++j)
        for (Index i = e_lo[0]; i < e_hi[0]; ++i) {
          const std::size_t q = at(i, j, k);
          const T ca = arrays_ ? ca_all[q] : ca0_;
          const T cb = arrays_ ? cb_all[q] : cb0_;
          if (j > 0 && k > 0)
            ex[q] = ca * ex[q] + cb * ((hz[q] - hz[q - sy]) * idy - (hy[q] - hy[q - sz]) * idz);
          if (i > 0 && k > 0)
            ey[q] = ca * ey[q] + cb * ((hx[q] - hx[q - sz]) * idz - (hz[q] - hz[q - sx]) * idx);
          if (i > 0 && j > 0)
            ez[q] = ca * ez[q] + cb * ((hy[q] - hy[q - sx]) * idx - (hx[q] - hx[q - sy]) * idy);
        }
    });
    if (p_.source && region_.contains(p_.source->index)) {
      const PointSource& s = *p_.source;
      const T current = static_cast<T>(s.value((static_cast<double>(step_) + 0.5) * dt_));
      const std::size_t q = at(s.index[0], s.index[1], s.index[2]);
      const T cb = arrays_ ? cb_[q] : cb0_;
      e_[s.component][q] = e_[s.component][q] - cb * current;
    }
    ++step_;
  }
};

}  // namespace fdtd_reference
}  // namespace kstencil
