#pragma once
// An independent host implementation of the Yee update (plain loops over x-fastest arrays over the
// whole grid, planes on the host's threads), to verify the Kokkos kernels bitwise: it starts from a
// solver's state (every rank's, gathered on rank 0) and applies the same formulas in the same
// order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/huge_pages.hpp"
#include "fdtd/fdtd.hpp"
#include "fdtd/kernels.hpp"

namespace kstencil {
namespace fdtd_reference {

// Values over a whole grid in host memory, x fastest, first touched on the host's threads.
template <class T>
using HostValues = Kokkos::View<T*, Kokkos::HostSpace>;

// Collective: `field`'s values over every rank's `box` (global indices; the boxes tile `whole`), on
// rank 0 x fastest over `whole`; empty elsewhere. Through `staging`, reused field after field: a
// grid is gigabytes in a large run, and one rank's copy goes straight into the result.
template <class T, class KokkosLayout>
HostValues<T> gather_whole(const Field<T, KokkosLayout>& field, const Grid& grid, const Box& box,
                           const Box& whole, MPI_Comm comm, HostStaging<T, KokkosLayout>& staging) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const auto& host = staging.read(field);
  const auto allocate = [&] {
    return allocate_on_huge_pages<HostValues<T>>("x_fastest",
                                                 static_cast<std::size_t>(whole.size()));
  };
  if (ranks == 1 && box == whole) {
    HostValues<T> out = allocate();
    copy_x_fastest(host, grid, box, out.data());
    return out;
  }
  std::vector<T> local(static_cast<std::size_t>(box.size()));
  copy_x_fastest(host, grid, box, local.data());
  const std::vector<T> all = gather_boxes(std::move(local), box, whole, comm);
  if (all.empty()) return {};
  HostValues<T> out = allocate();
  Kokkos::parallel_for(
      "kstencil::fdtd::gathered",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::size_t>>(
          0, all.size()),
      [&](const std::size_t n) { out(n) = all[n]; });
  return out;
}

template <class T>
class HostYee {
 public:
  // Collective over the solver's ranks; only rank 0's reference holds the state.
  template <class KokkosLayout>
  explicit HostYee(const YeeSolver<T, KokkosLayout>& solver)
      : p_(solver.problem()), dt_(solver.dt()), step_(solver.steps_done()) {
    const Grid& nodes = solver.nodes();
    nx_ = nodes.points[0];
    ny_ = nodes.points[1];
    HostStaging<T, KokkosLayout> staging;
    const auto whole = [&](const Field<T, KokkosLayout>& f) {
      return gather_whole(f, nodes, nodes.owned, nodes.global(), solver.comm(), staging);
    };
    const auto& f = solver.fields();
    for (int c = 0; c < 3; ++c) {
      e_[c] = whole(f.e[c]);
      h_[c] = whole(f.h[c]);
    }
    arrays_ = p_.media.mode == MediaMode::arrays;
    if (arrays_) {
      ca_ = whole(f.ca);
      cb_ = whole(f.cb);
      db_ = whole(f.db);
    }
    const Material& m = p_.media.background;
    const auto c = fdtd_detail::coefficients_of(m.eps, m.mu, m.sigma, dt_);
    ca0_ = static_cast<T>(c.ca);
    cb0_ = static_cast<T>(c.cb);
    db0_ = static_cast<T>(c.db);
    for (int d = 0; d < 3; ++d) inverse_h_[d] = static_cast<T>(1 / p_.spacing[d]);
  }

  void run(std::int64_t steps) {
    if (e_[0].size() == 0) return;  // not rank 0
    for (std::int64_t s = 0; s < steps; ++s) step();
  }

  // Component c (0-5) over its lattice, x fastest.
  std::vector<T> component(int c) const {
    const T* const all = (c < 3 ? e_[c] : h_[c - 3]).data();
    const Index3 dims = component_dims(p_, c);
    std::vector<T> out(static_cast<std::size_t>(dims[0] * dims[1] * dims[2]));
    planes(dims[2], [&](const Index k) {
      for (Index j = 0; j < dims[1]; ++j)
        for (Index i = 0; i < dims[0]; ++i)
          out[static_cast<std::size_t>(i + dims[0] * (j + dims[1] * k))] = all[at(i, j, k)];
    });
    return out;
  }

  // `values` (component c over its lattice, x fastest) against this state: the largest
  // difference and how many values differ in any bit (a NaN against itself counts).
  struct Comparison {
    double max_diff = 0;
    std::int64_t mismatches = 0;
  };
  Comparison compare(int c, const HostValues<T>& values) const {
    const T* const all = (c < 3 ? e_[c] : h_[c - 3]).data();
    const Index3 dims = component_dims(p_, c);
    if (values.size() != static_cast<std::size_t>(dims[0] * dims[1] * dims[2]))
      throw std::invalid_argument("HostYee::compare: values of another lattice");
    std::vector<Comparison> per_plane(static_cast<std::size_t>(dims[2]));
    planes(dims[2], [&](const Index k) {
      Comparison& here = per_plane[static_cast<std::size_t>(k)];
      std::size_t n = static_cast<std::size_t>(dims[0] * dims[1] * k);
      for (Index j = 0; j < dims[1]; ++j)
        for (Index i = 0; i < dims[0]; ++i, ++n) {
          const T want = all[at(i, j, k)];
          here.max_diff = std::max(
              here.max_diff, std::abs(static_cast<double>(values[n]) - static_cast<double>(want)));
          here.mismatches += values[n] != want;
        }
    });
    Comparison total;
    for (const Comparison& p : per_plane) {
      total.max_diff = std::max(total.max_diff, p.max_diff);
      total.mismatches += p.mismatches;
    }
    return total;
  }

 private:
  FdtdProblem p_;
  double dt_;
  std::int64_t step_;
  Index nx_ = 0, ny_ = 0;
  bool arrays_ = false;
  HostValues<T> e_[3], h_[3], ca_, cb_, db_;
  T ca0_, cb0_, db0_, inverse_h_[3];

  std::size_t at(Index i, Index j, Index k) const {
    return static_cast<std::size_t>(i + nx_ * (j + ny_ * k));
  }

  // plane(k) for k in [0, count) on the host's threads.
  template <class Plane>
  static void planes(const Index count, const Plane& plane) {
    Kokkos::parallel_for(
        "kstencil::fdtd::reference",
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(0, count),
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
    // A half-step's points read only the other field: its planes are independent.
    planes(n[2], [&](const Index k) {
      for (Index j = 0; j < n[1]; ++j)
        for (Index i = 0; i < n[0]; ++i) {
          const std::size_t q = at(i, j, k);
          const T db = arrays_ ? db_all[q] : db0_;
          hx[q] = hx[q] - db * ((ez[q + sy] - ez[q]) * idy - (ey[q + sz] - ey[q]) * idz);
          hy[q] = hy[q] - db * ((ex[q + sz] - ex[q]) * idz - (ez[q + sx] - ez[q]) * idx);
          hz[q] = hz[q] - db * ((ey[q + sx] - ey[q]) * idx - (ex[q + sy] - ex[q]) * idy);
        }
    });
    planes(n[2], [&](const Index k) {
      for (Index j = 0; j < n[1]; ++j)
        for (Index i = 0; i < n[0]; ++i) {
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
    if (p_.source) {
      const PointSource& s = *p_.source;
      const T current = static_cast<T>(s.value((static_cast<double>(step_) + 0.5) * dt_));
      const std::size_t q = at(s.index[0], s.index[1], s.index[2]);
      const T cb = arrays_ ? cb_(q) : cb0_;
      e_[s.component](q) = e_[s.component](q) - cb * current;
    }
    ++step_;
  }
};

}  // namespace fdtd_reference
}  // namespace kstencil
