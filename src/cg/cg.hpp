#pragma once
// Conjugate gradients for the Poisson problem (poisson.hpp), built from Kokkos Kernels: the
// operator assembled as a CrsMatrix, KokkosSparse::spmv, and KokkosBlas dot, axpby and nrm2.
//
// A is symmetric positive definite on the interior. CG starts from u0 (boundary values, start
// values inside): r0 = b - A u0 is zero on the boundary, so every search direction is too, and the
// iteration is CG on the interior unknowns with the boundary values moved to the right-hand side.
// Its error after k iterations is ||r_k|| / (d sqrt(N)), the measure Jacobi's error has.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/exec_space.hpp"
#include "core/halo.hpp"
#include "jacobi/jacobi.hpp"
#include "poisson/operator.hpp"
#include "poisson/poisson.hpp"

namespace kstencil {

struct CgStop {
  double tolerance = 1e-4;
  std::int64_t max_iterations = 1000;
};

template <class T, class KokkosLayout>
class CgSolver {
 public:
  // Several ranks: `d` cut the problem's grid; the halo of u and p is exchanged before each spmv
  // and every dot product is summed over the ranks in rank order.
  explicit CgSolver(const PoissonProblem& problem,
                    const Decomposition& d = Decomposition::single());
  // Iterates until the error is at most the tolerance or max_iterations are done, calling
  // on_error(k, error) for the error after k = 0, 1, ... iterations.
  // `from`: where it starts (a checkpoint's solve so far, after restore()) and the checkpoints
  // on the way.
  SolveResult solve(const CgStop& stop,
                    const std::function<void(std::int64_t, double)>& on_error = {},
                    const SolveContinuation& from = {});
  // The iteration's state besides u: the residual r, the search direction p (this rank's owned
  // box, x fastest) and r . r; and a restart's way back into it.
  struct State {
    std::vector<T> u, r, p;
    double rr = 0;
  };
  State state_host() const;
  void restore(const State& state);
  // Recomputed from the current u (CG's recursive residual drifts from it in floating point):
  // ||b - A u|| / (d sqrt(N)) (the error) and ||b - A u|| / ||b||.
  struct Residual {
    double error, relative;
  };
  Residual residual() const;
  // The current iterate over this rank's owned box, x fastest (host memory).
  std::vector<T> solution_host() const;
  const HaloExchange<T, KokkosLayout>& halo() const { return halo_; }
  const PoissonMatrix<T>& matrix() const { return a_; }
  // Bytes one iteration moves at least: the matrix once, and the vectors each kernel reads/writes.
  double bytes_per_iteration() const;

 private:
  Grid grid_;
  MPI_Comm comm_;
  PoissonCoefficients coefficients_;
  PoissonMatrix<T> a_;
  Field<T, KokkosLayout> u_, b_, r_, p_, ap_;
  mutable HaloExchange<T, KokkosLayout> halo_;
  double rr_ = 0;  // r . r of the current residual
  // x . y over every rank (ghost entries of y are 0).
  double dot(const FlatVector<T>& x, const FlatVector<T>& y) const;
};

// The assembled operator against the matrix-free Jacobi kernel on random fields: one Jacobi update
// of u (with a random right-hand side) must equal u + (b - spmv(A, u)) / d at every point within
// the rounding bound of the two evaluations (see the definition). Fails on a wrong entry, column
// or row order; says nothing about speed.
struct OperatorCheck {
  double max_bound_ratio = 0;  // max over points of |difference| / bound
  std::int64_t violations = 0;
  bool passed = false;
};
template <class T, class KokkosLayout>
OperatorCheck check_operator_against_stencil(const Grid& grid, const JacobiPlan& plan);

}  // namespace kstencil
