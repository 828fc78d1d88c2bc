#pragma once
// CgSolver and the operator check; included by one file per precision.
// Kokkos Kernels 3.4 headers need Kokkos_Core.hpp before them.
// clang-format off
#include <Kokkos_Core.hpp>

#include "core/interrupt.hpp"
#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosSparse_spmv.hpp>
// clang-format on
#include <cmath>
#include <limits>

#include "cg/cg.hpp"

namespace kstencil {

template <class T, class KokkosLayout>
CgSolver<T, KokkosLayout>::CgSolver(const PoissonProblem& problem, const Decomposition& d)
    : grid_(problem.grid),
      comm_(d.comm),
      coefficients_(poisson_coefficients(grid_)),
      halo_(grid_, d, HaloSides::both, 1) {
  const auto fields = make_poisson_fields<T, KokkosLayout>(problem);
  u_ = fields.u;
  b_ = poisson_rhs_vector<T, KokkosLayout>(grid_, fields);
  a_ = assemble_poisson_matrix<T, KokkosLayout>(grid_);
  r_ = allocate_field<T, KokkosLayout>("cg_r", grid_);
  p_ = allocate_field<T, KokkosLayout>("cg_p", grid_);
  ap_ = allocate_field<T, KokkosLayout>("cg_Ap", grid_);
}

template <class T, class KokkosLayout>
SolveResult CgSolver<T, KokkosLayout>::solve(
    const CgStop& stop, const std::function<void(std::int64_t, double)>& on_error,
    const SolveContinuation& from) {
  const auto u = flat(u_), r = flat(r_), p = flat(p_), ap = flat(ap_);
  const double scale = coefficients_.diagonal * std::sqrt(point_count(grid_));
  SolveResult result = from.start;
  std::int64_t k = result.iterations;
  double& rr = rr_;
  const auto record = [&] {
    result.error = std::sqrt(rr) / scale;
    result.history.push_back({k, result.error});
    if (on_error) on_error(k, result.error);
  };
  if (result.history.empty()) {  // a fresh start; a restart's r, p and r . r are restored
    halo_.exchange({u_});
    KokkosSparse::spmv("N", T(1), a_, u, T(0), r);  // r = b - A u (0 at ghost points)
    KokkosBlas::axpby(T(1), flat(b_), T(-1), r);
    Kokkos::deep_copy(p, r);
    rr = dot(r, r);
    record();
  }
  while (result.error > stop.tolerance && k < stop.max_iterations) {
    if (k % interrupt_check_every == 0 && interrupt_agreed(comm_)) {
      result.interrupted = true;
      break;
    }
    if (from.checkpoint_due(k)) {
      result.iterations = k;
      from.checkpoint(result);
    }
    halo_.step({p_}, 0, [&](int) { KokkosSparse::spmv("N", T(1), a_, p, T(0), ap); });
    const T alpha = static_cast<T>(rr / dot(p, ap));
    KokkosBlas::axpby(alpha, p, T(1), u);    // u += alpha p
    KokkosBlas::axpby(-alpha, ap, T(1), r);  // r -= alpha A p
    const double rr_next = dot(r, r);
    const T beta = static_cast<T>(rr_next / rr);
    rr = rr_next;
    KokkosBlas::axpby(T(1), r, beta, p);  // p = r + beta p
    ++k;
    record();
  }
  result.iterations = k;
  result.converged = result.error <= stop.tolerance;
  return result;
}

template <class T, class KokkosLayout>
double CgSolver<T, KokkosLayout>::dot(const FlatVector<T>& x, const FlatVector<T>& y) const {
  return global_sum(static_cast<double>(KokkosBlas::dot(x, y)), comm_);
}

template <class T, class KokkosLayout>
typename CgSolver<T, KokkosLayout>::Residual CgSolver<T, KokkosLayout>::residual() const {
  const auto r = allocate_field<T, KokkosLayout>("cg_residual", grid_);
  halo_.exchange({u_});
  KokkosSparse::spmv("N", T(1), a_, flat(u_), T(0), flat(r));
  KokkosBlas::axpby(T(1), flat(b_), T(-1), flat(r));
  const auto norm_of = [&](const FlatVector<T>& x) {
    const double local = KokkosBlas::nrm2(x);
    return std::sqrt(global_sum(local * local, comm_));
  };
  const double norm = norm_of(flat(r)), b_norm = norm_of(flat(b_));
  return {norm / (coefficients_.diagonal * std::sqrt(point_count(grid_))),
          b_norm > 0 ? norm / b_norm : norm};
}

template <class T, class KokkosLayout>
std::vector<T> CgSolver<T, KokkosLayout>::solution_host() const {
  return to_host_x_fastest(u_, grid_, grid_.owned);
}

template <class T, class KokkosLayout>
typename CgSolver<T, KokkosLayout>::State CgSolver<T, KokkosLayout>::state_host() const {
  return {to_host_x_fastest(u_, grid_, grid_.owned), to_host_x_fastest(r_, grid_, grid_.owned),
          to_host_x_fastest(p_, grid_, grid_.owned), rr_};
}

template <class T, class KokkosLayout>
void CgSolver<T, KokkosLayout>::restore(const State& state) {
  // r's ghost entries stay 0 (dots sum them); p's and u's are refilled by exchanges before use.
  from_host_x_fastest(u_, grid_, grid_.owned, state.u);
  from_host_x_fastest(r_, grid_, grid_.owned, state.r);
  from_host_x_fastest(p_, grid_, grid_.owned, state.p);
  rr_ = state.rr;
}

template <class T, class KokkosLayout>
double CgSolver<T, KokkosLayout>::bytes_per_iteration() const {
  const double rows = a_.numRows(), nonzeros = a_.nnz();
  const double matrix = nonzeros * (sizeof(T) + sizeof(int)) +
                        (rows + 1) * sizeof(typename PoissonMatrix<T>::size_type);
  // spmv p -> Ap (2), dot p.Ap (2), u and r updates (3 each), dot r.r (1), p update (3).
  return matrix + 14 * rows * sizeof(T);
}

namespace cg_detail {

// A value in [-1, 1] fixed by the point and a salt (splitmix64), so runs are reproducible.
inline double unit_random(const Index3& p, std::uint64_t salt) {
  std::uint64_t z = static_cast<std::uint64_t>(p[0] + 7919 * (p[1] + 7919 * p[2])) * 4 + salt;
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace cg_detail

template <class T, class KokkosLayout>
OperatorCheck check_operator_against_stencil(const Grid& grid, const JacobiPlan& plan) {
  using cg_detail::unit_random;
  PoissonProblem problem;
  problem.grid = grid;
  problem.boundary = [](const Index3& p) { return unit_random(p, 1); };
  problem.initial = [](const Index3& p) { return unit_random(p, 2); };
  problem.rhs = [](const Index3& p) { return unit_random(p, 3); };

  const auto fields = make_poisson_fields<T, KokkosLayout>(problem);
  const auto a = assemble_poisson_matrix<T, KokkosLayout>(grid);
  auto au = allocate_field<T, KokkosLayout>("A u", grid);
  KokkosSparse::spmv("N", T(1), a, flat(fields.u), T(0), flat(au));
  JacobiSolver<T, KokkosLayout> jacobi(problem, plan);
  jacobi.iterate(false);

  // Every value of this rank's allocated box (ghost layers hold the neighbours' random values),
  // the update at its owned points.
  const Box all = grid.allocated;
  const auto u = to_host_x_fastest(fields.u, grid, all);
  const auto f = fields.has_rhs ? to_host_x_fastest(fields.rhs, grid, all) : std::vector<T>();
  const auto au_host = to_host_x_fastest(au, grid, all);
  const auto updated = jacobi.solution_host();
  const PoissonCoefficients c = poisson_coefficients(grid);
  const Index3 n = all.extents();
  const Index stride[3] = {1, n[0], n[0] * n[1]};
  const Box& o = grid.owned;
  // The two evaluations each round a sum of at most 7 terms, and the diagonal (spmv) or its
  // inverse (the kernel) is rounded to T: together at most about 20 eps S / d, S the sum of the
  // terms' magnitudes. The bound takes twice that. A wrong coefficient or column is off by
  // O(|u|), 10^5 times more in float.
  const double eps = std::numeric_limits<T>::epsilon();
  OperatorCheck check;
  std::size_t owned_index = 0;
  for (Index k = o.lo[2]; k < o.hi[2]; ++k)
    for (Index j = o.lo[1]; j < o.hi[1]; ++j)
      for (Index i = o.lo[0]; i < o.hi[0]; ++i, ++owned_index) {
        const Index q = (i - all.lo[0]) + n[0] * ((j - all.lo[1]) + n[1] * (k - all.lo[2]));
        const bool edge = is_boundary(grid, {i, j, k});
        const double d = edge ? 1.0 : c.diagonal;
        const double b = edge ? u[q] : -static_cast<double>(f[q]);
        double magnitude = std::abs(b) + d * std::abs(u[q]);
        if (!edge)
          for (int axis = 0; axis < 3; ++axis)
            if (!is_collapsed(grid, axis))
              magnitude +=
                  c.c[axis] * (std::abs(u[q - stride[axis]]) + std::abs(u[q + stride[axis]]));
        const double expected = u[q] + (b - au_host[q]) / d;
        const double bound = 40 * eps * (magnitude / d + std::abs(u[q]));
        const double ratio = std::abs(updated[owned_index] - expected) / bound;
        check.max_bound_ratio = std::max(check.max_bound_ratio, ratio);
        check.violations += ratio > 1;
      }
  check.passed = check.violations == 0;
  return check;
}

#define KSTENCIL_INSTANTIATE_CG(T, L) \
  template class CgSolver<T, L>;      \
  template OperatorCheck check_operator_against_stencil<T, L>(const Grid&, const JacobiPlan&);

}  // namespace kstencil
