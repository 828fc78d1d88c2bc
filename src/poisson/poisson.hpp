#pragma once
// The Poisson problem the Jacobi and CG solvers share (seed 004): lap u = f on a 1D, 2D or 3D grid
// with Dirichlet boundary values.
//
// Points (i, j, k) with x = origin + i hx, ...; an axis with one point is collapsed (a 1D grid is
// nx x 1 x 1, a 2D grid nx x ny x 1). Boundary points (index 0 or n-1 along a non-collapsed axis)
// hold Dirichlet values g; interior points are unknowns. The discrete operator A has a row per
// point: the identity on the boundary and minus the 7-point (5-, 3-point) Laplacian inside,
//   (A u)_p = d u_p - sum_a c_a (u(p - e_a) + u(p + e_a)),   c_a = 1 / h_a^2,  d = sum_a 2 c_a,
// with b_p = g_p on the boundary and -f_p inside. A Jacobi iteration is u <- u + (b - A u) / d, so
// its error sqrt(sum (u_new - u_old)^2 / N) (N = every point) equals ||b - A u|| / (d sqrt(N)): the
// measure both solvers stop on.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/field.hpp"
#include "core/grid.hpp"

namespace kstencil {

struct PoissonProblem {
  Grid grid;
  std::function<double(const Index3&)> boundary;  // g at a boundary point
  std::function<double(const Index3&)> rhs;       // f at an interior point; empty = 0 (Laplace)
  // f where it is one value at every interior point (rhs then returns it): a solver may keep a
  // scalar instead of a field, one array less to read per update.
  std::optional<double> uniform_rhs;
  std::function<double(const Index3&)> initial;  // interior start value; empty = 0
};

bool is_collapsed(const Grid& grid, int axis);
bool is_boundary(const Grid& grid, const Index3& p);
// The unknowns: the interior along non-collapsed axes (global indices).
Box interior_box(const Grid& grid);
// The unknowns this rank updates: the interior within its owned box (global indices).
inline Box owned_interior(const Grid& grid) {
  return grid.owned.intersect(interior_box(grid));
}
// Every point of the grid, as a double (the N of the error).
double point_count(const Grid& grid);

// A solve's error history and outcome (either solver).
struct ErrorRecord {
  std::int64_t iteration;
  double error;
};

struct SolveResult {
  std::int64_t iterations = 0;  // iterations done
  double error = 0;             // last computed error
  bool converged = false;       // error <= tolerance within max_iterations (the seed's Success)
  std::vector<ErrorRecord> history;  // every computed error
  bool interrupted = false;          // stopped early by a signal (core/interrupt.hpp)
};

// Where a solve starts and what it saves on the way: a restart's iterations, error and history
// (none: iteration 0), and a checkpoint callback called with the solve so far at every
// `checkpoint_every`-th iteration after the start (the solver's state is that iteration's).
struct SolveContinuation {
  SolveResult start;
  std::int64_t checkpoint_every = 0;
  std::function<void(const SolveResult&)> checkpoint;
  bool checkpoint_due(std::int64_t iteration) const {
    return checkpoint && checkpoint_every > 0 && iteration > start.iterations &&
           iteration % checkpoint_every == 0;
  }
};

// How often a solve asks whether a signal arrived (a collective: not every cheap iteration).
constexpr std::int64_t interrupt_check_every = 16;

struct PoissonCoefficients {
  double c[3];      // 1 / h_a^2 per axis, 0 on a collapsed axis
  double diagonal;  // sum over non-collapsed axes of 2 / h_a^2
};
PoissonCoefficients poisson_coefficients(const Grid& grid);

// The problem's fields on the default execution space: u holds the boundary values and the start
// values inside; rhs holds f inside and 0 on the boundary (a one-point field when f is absent, or
// when it is uniform and `scalar_uniform_rhs`: then uniform_rhs holds it).
template <class T, class KokkosLayout>
struct PoissonFields {
  Field<T, KokkosLayout> u, rhs;
  bool has_rhs = false;
  std::optional<T> uniform_rhs;
};

template <class T, class KokkosLayout>
PoissonFields<T, KokkosLayout> make_poisson_fields(const PoissonProblem& problem,
                                                   const bool scalar_uniform_rhs = false) {
  PoissonFields<T, KokkosLayout> fields;
  const Grid& grid = problem.grid;
  if (problem.rhs && scalar_uniform_rhs && problem.uniform_rhs)
    fields.uniform_rhs = static_cast<T>(*problem.uniform_rhs);
  fields.has_rhs = static_cast<bool>(problem.rhs) && !fields.uniform_rhs;
  fields.u = allocate_field<T, KokkosLayout>("u", grid);
  fields.rhs = allocate_field<T, KokkosLayout>(
      "rhs", fields.has_rhs ? grid : Grid::whole({1, 1, 1}, {}, {}));
  // Set on the host once, at set-up, over the allocated box (ghost layers included): planes of the
  // layout's slowest axis on the host's threads, each written in memory order.
  auto u = Kokkos::create_mirror_view(fields.u);
  auto rhs = Kokkos::create_mirror_view(fields.rhs);
  const Box& b = grid.allocated;
  const Index3 n = b.extents();
  constexpr bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
  Kokkos::parallel_for(
      "kstencil::poisson::fields",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(
          0, n[right ? 0 : 2]),
      [&](const Index plane) {
        for (Index lj = 0; lj < n[1]; ++lj)
          for (Index fast = 0; fast < n[right ? 2 : 0]; ++fast) {
            const Index li = right ? plane : fast, lk = right ? fast : plane;
            const Index3 p{b.lo[0] + li, b.lo[1] + lj, b.lo[2] + lk};
            const bool edge = is_boundary(grid, p);
            u(li, lj, lk) = static_cast<T>(edge ? problem.boundary(p)
                                                : (problem.initial ? problem.initial(p) : 0.0));
            if (fields.has_rhs) rhs(li, lj, lk) = static_cast<T>(edge ? 0.0 : problem.rhs(p));
          }
      });
  Kokkos::deep_copy(fields.u, u);
  if (fields.has_rhs) Kokkos::deep_copy(fields.rhs, rhs);
  return fields;
}

// A field's values as one vector in memory order, without a copy: what Kokkos Kernels' BLAS and
// spmv take. Fields are allocated unpadded, so the span is exactly the grid's points.
template <class T>
using FlatVector = Kokkos::View<T*, Kokkos::LayoutLeft, Kokkos::DefaultExecutionSpace::memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T, class KokkosLayout>
FlatVector<T> flat(const Field<T, KokkosLayout>& field) {
  return FlatVector<T>(field.data(), field.span());
}

}  // namespace kstencil
