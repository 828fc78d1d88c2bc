#pragma once
// CgSolver and the operator check; included by one file per precision.
// Kokkos Kernels 3.4 headers need Kokkos_Core.hpp before them.
// clang-format off
#include <Kokkos_Core.hpp>
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
CgSolver<T, KokkosLayout>::CgSolver(const PoissonProblem& problem)
    : grid_(problem.grid), coefficients_(poisson_coefficients(grid_)) {
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
    const CgStop& stop, const std::function<void(std::int64_t, double)>& on_error) {
  const auto u = flat(u_), r = flat(r_), p = flat(p_), ap = flat(ap_);
  const double scale = coefficients_.diagonal * std::sqrt(point_count(grid_));
  KokkosSparse::spmv("N", T(1), a_, u, T(0), r);  // r = b - A u
  KokkosBlas::axpby(T(1), flat(b_), T(-1), r);
  Kokkos::deep_copy(p, r);
  double rr = KokkosBlas::dot(r, r);

  SolveResult result;
  std::int64_t k = 0;
  const auto record = [&] {
    result.error = std::sqrt(rr) / scale;
    result.history.push_back({k, result.error});
    if (on_error) on_error(k, result.error);
  };
  record();
  while (result.error > stop.tolerance && k < stop.max_iterations) {
    KokkosSparse::spmv("N", T(1), a_, p, T(0), ap);
    const T alpha = static_cast<T>(rr / KokkosBlas::dot(p, ap));
    KokkosBlas::axpby(alpha, p, T(1), u);    // u += alpha p
    KokkosBlas::axpby(-alpha, ap, T(1), r);  // r -= alpha A p
    const double rr_next = KokkosBlas::dot(r, r);
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
typename CgSolver<T, KokkosLayout>::Residual CgSolver<T, KokkosLayout>::residual() const {
  const auto r = allocate_field<T, KokkosLayout>("cg_residual", grid_);
  KokkosSparse::spmv("N", T(1), a_, flat(u_), T(0), flat(r));
  KokkosBlas::axpby(T(1), flat(b_), T(-1), flat(r));
  const double norm = KokkosBlas::nrm2(flat(r)), b_norm = KokkosBlas::nrm2(flat(b_));
  return {norm / (coefficients_.diagonal * std::sqrt(point_count(grid_))),
          b_norm > 0 ? norm / b_norm : norm};
}

template <class T, class KokkosLayout>
std::vector<T> CgSolver<T, KokkosLayout>::solution_host() const {
  return to_host_x_fastest(u_, grid_, grid_.global());
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

  const Box all = grid.global();
  const auto u = to_host_x_fastest(fields.u, grid, all);
  const auto f = to_host_x_fastest(fields.rhs, grid, all);
  const auto au_host = to_host_x_fastest(au, grid, all);
  const auto updated = jacobi.solution_host();
  const PoissonCoefficients c = poisson_coefficients(grid);
  const Index3& n = grid.points;
  const Index stride[3] = {1, n[0], n[0] * n[1]};
  // The two evaluations each round a sum of at most 7 terms, and the diagonal (spmv) or its
  // inverse (the kernel) is rounded to T: together at most about 20 eps S / d, S the sum of the
  // terms' magnitudes. The bound takes twice that. A wrong coefficient or column is off by
  // O(|u|), 10^5 times more in float.
  const double eps = std::numeric_limits<T>::epsilon();
  OperatorCheck check;
  for (Index k = 0; k < n[2]; ++k)
    for (Index j = 0; j < n[1]; ++j)
      for (Index i = 0; i < n[0]; ++i) {
        const Index q = i + n[0] * (j + n[1] * k);
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
        const double ratio = std::abs(updated[q] - expected) / bound;
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
