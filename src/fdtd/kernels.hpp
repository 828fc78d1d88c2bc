#pragma once
// Yee update kernels (E and H), their loops (cell, column) and policies.
#include <type_traits>

#include "core/policy.hpp"
#include "fdtd/fdtd.hpp"

namespace kstencil {
namespace fdtd_detail {

// Update coefficients of one material for time step dt (double on host and device alike, so
// that uniform and per-cell coefficients round identically).
struct Coefficients {
  double ca, cb, db;
};
KOKKOS_INLINE_FUNCTION Coefficients coefficients_of(double eps, double mu, double sigma,
                                                    double dt) {
  const double loss = sigma * dt / (2 * eps);
  return {(1 - loss) / (1 + loss), (dt / eps) / (1 + loss), dt / mu};
}

template <class T, class KokkosLayout>
struct YeeViews {
  Field<T, KokkosLayout> ex, ey, ez, hx, hy, hz;
  Field<T, KokkosLayout> ca, cb, db, eps, mu;  // arrays mode
  T ca0, cb0, db0, eps0, mu0;                  // uniform mode
  T idx, idy, idz;                             // 1 / spacing
  int oi, oj, ok;  // global index of the local (0, 0, 0): the walls are at global 0
};

// E^n -> E^(n+1) at cell (i, j, k) (local indices); tangential E on the walls (global j or k = 0
// for Ex, ...) is not updated and stays zero (PEC). Cells are [0, nx) x [0, ny) x [0, nz).
template <class T, class KokkosLayout, bool Arrays>
struct UpdateE {
  YeeViews<T, KokkosLayout> v;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const T ca = Arrays ? v.ca(i, j, k) : v.ca0;
    const T cb = Arrays ? v.cb(i, j, k) : v.cb0;
    if (j + v.oj > 0 && k + v.ok > 0)
      v.ex(i, j, k) = ca * v.ex(i, j, k) + cb * ((v.hz(i, j, k) - v.hz(i, j - 1, k)) * v.idy -
                                                 (v.hy(i, j, k) - v.hy(i, j, k - 1)) * v.idz);
    if (i + v.oi > 0 && k + v.ok > 0)
      v.ey(i, j, k) = ca * v.ey(i, j, k) + cb * ((v.hx(i, j, k) - v.hx(i, j, k - 1)) * v.idz -
                                                 (v.hz(i, j, k) - v.hz(i - 1, j, k)) * v.idx);
    if (i + v.oi > 0 && j + v.oj > 0)
      v.ez(i, j, k) = ca * v.ez(i, j, k) + cb * ((v.hy(i, j, k) - v.hy(i - 1, j, k)) * v.idx -
                                                 (v.hx(i, j, k) - v.hx(i, j - 1, k)) * v.idy);
  }
};

// H^(n-1/2) -> H^(n+1/2) at cell (i, j, k). Hx on the x walls (i = nx) is never touched: its curl
// involves only wall-tangential E, which is zero, so it stays zero. energy(): the same update,
// returning mu H^(n-1/2) . H^(n+1/2) of the cell.
template <class T, class KokkosLayout, bool Arrays>
struct UpdateH {
  YeeViews<T, KokkosLayout> v;
  KOKKOS_FORCEINLINE_FUNCTION double energy(const int i, const int j, const int k) const {
    const T db = Arrays ? v.db(i, j, k) : v.db0;
    const T hx = v.hx(i, j, k), hy = v.hy(i, j, k), hz = v.hz(i, j, k);
    const T nx = hx - db * ((v.ez(i, j + 1, k) - v.ez(i, j, k)) * v.idy -
                            (v.ey(i, j, k + 1) - v.ey(i, j, k)) * v.idz);
    const T ny = hy - db * ((v.ex(i, j, k + 1) - v.ex(i, j, k)) * v.idz -
                            (v.ez(i + 1, j, k) - v.ez(i, j, k)) * v.idx);
    const T nz = hz - db * ((v.ey(i + 1, j, k) - v.ey(i, j, k)) * v.idx -
                            (v.ex(i, j + 1, k) - v.ex(i, j, k)) * v.idy);
    v.hx(i, j, k) = nx;
    v.hy(i, j, k) = ny;
    v.hz(i, j, k) = nz;
    const double mu = Arrays ? static_cast<double>(v.mu(i, j, k)) : static_cast<double>(v.mu0);
    return mu * (static_cast<double>(hx) * nx + static_cast<double>(hy) * ny +
                 static_cast<double>(hz) * nz);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    energy(i, j, k);  // the reduction's arithmetic is dropped by the compiler when unused
  }
};

// One cell per work item: policy dimensions (i, j, k), or (k, j, i) when reversed.
template <class Update, bool Reversed>
struct CellLoop {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    update(Reversed ? p2 : p0, j, Reversed ? p0 : p2);
  }
};
template <class Update, bool Reversed>
struct CellEnergyLoop {
  Update update;
  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2,
                                         double& sum) const {
    sum += update.energy(Reversed ? p2 : p0, j, Reversed ? p0 : p2);
  }
};

// One column along the slowest axis per work item: policy (contiguous index, j, 0); LayoutRight
// columns run along x, LayoutLeft columns along z.
template <class Update, bool XColumns>
struct ColumnLoop {
  Update update;
  int start, length;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, const int j, const int) const {
    for (int s = start; s < start + length; ++s) update(XColumns ? s : c, j, XColumns ? c : s);
  }
};
template <class Update, bool XColumns>
struct ColumnEnergyLoop {
  Update update;
  int start, length;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, const int j, const int, double& sum) const {
    for (int s = start; s < start + length; ++s)
      sum += update.energy(XColumns ? s : c, j, XColumns ? c : s);
  }
};

// Runs the update over the cells as `plan` says (variant, mapping, bounds, tile, launch bound);
// Energy: as a reduction, returning the sum of update.energy().
template <bool Energy, class Update>
double launch_update(const char* label, const FdtdPlan& plan, const Update& update) {
  const FdtdLaunch& l = plan.launch;
  double sum = 0;
  if (plan.config.variant == FdtdVariant::column) {
    // Columns along x for LayoutRight, along z for LayoutLeft: the contiguous axis is in the
    // policy.
    constexpr bool X =
        std::is_same<typename decltype(update.v.ex)::array_layout, Kokkos::LayoutRight>::value;
    dispatch_launch_bound(plan.config.launch_bounds, [&](auto bound) {
      const auto policy =
          planned_policy<Kokkos::Iterate::Left, decltype(bound)::value>(l.lower, l.upper, l.tile);
      if constexpr (Energy)
        Kokkos::parallel_reduce(
            label, policy, ColumnEnergyLoop<Update, X>{update, l.column_start, l.column_length},
            sum);
      else
        Kokkos::parallel_for(label, policy,
                             ColumnLoop<Update, X>{update, l.column_start, l.column_length});
    });
    return sum;
  }
  dispatch_traits(
      plan.mapping, plan.config.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
        constexpr bool Reversed = decltype(reversed)::value;
        const auto policy = planned_policy<decltype(iterate)::value, decltype(bound)::value>(
            l.lower, l.upper, l.tile);
        if constexpr (Energy)
          Kokkos::parallel_reduce(label, policy, CellEnergyLoop<Update, Reversed>{update}, sum);
        else
          Kokkos::parallel_for(label, policy, CellLoop<Update, Reversed>{update});
      });
  return sum;
}

}  // namespace fdtd_detail
}  // namespace kstencil
