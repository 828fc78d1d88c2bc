// Kokkos Kernels in use: the assembled Poisson operator (exact values, structure, agreement with
// the matrix-free Jacobi kernel) and CG (exact discrete solutions, agreement with Jacobi).
// Kokkos Kernels 3.4 headers need Kokkos_Core.hpp before them.
// clang-format off
#include <Kokkos_Core.hpp>
#include <KokkosSparse_spmv.hpp>
// clang-format on
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <cmath>
#include <vector>

#include "cg/cg.hpp"

using namespace kstencil;

namespace {

const Index3 shapes[] = {{17, 1, 1}, {9, 7, 1}, {6, 5, 7}};

// The default Jacobi kernel's plan with the host's policy order, whatever the backend.
template <class L>
JacobiPlan host_plan(const Grid& grid) {
  JacobiKernelConfig c;
  c.layout = layout_of<L>();
  ExecLimits limits = default_exec_limits();
  limits.gpu = false;
  return plan_jacobi(c, grid, limits);
}

// Smallest eigenvalue of A on the interior: sum over axes of 4/h^2 sin^2(pi / (2 (n - 1))).
double smallest_eigenvalue(const Grid& g) {
  constexpr double pi = 3.14159265358979323846;
  double lambda = 0;
  for (int d = 0; d < 3; ++d)
    if (!is_collapsed(g, d)) {
      const double s = std::sin(pi / (2.0 * (g.points[d] - 1)));
      lambda += 4 / (g.spacing[d] * g.spacing[d]) * s * s;
    }
  return lambda;
}

// ||u - u*||_2 <= ||b - A u||_2 / lambda_min, with ||b - A u|| = error d sqrt(N).
double solution_error_bound(const Grid& g, double error) {
  return error * poisson_coefficients(g).diagonal * std::sqrt(point_count(g)) /
         smallest_eigenvalue(g);
}

}  // namespace

TEMPLATE_TEST_CASE("the assembled operator applied to a quadratic is exact", "[cg]",
                   Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // u = i^2 + 2 j^2 + 3 k^2 with unit spacing: every second difference is exact, so A u is
  // -(2 + 4 + 6) inside (fewer terms on fewer axes) and u on the boundary, bitwise.
  for (const auto& n : shapes) {
    const Grid g = Grid::whole(n, {0, 0, 0}, {1, 1, 1});
    PoissonProblem p;
    p.grid = g;
    const auto q = [](const Index3& x) {
      return double(x[0] * x[0] + 2 * x[1] * x[1] + 3 * x[2] * x[2]);
    };
    p.boundary = q;
    p.initial = q;
    const auto fields = make_poisson_fields<double, TestType>(p);
    const auto a = assemble_poisson_matrix<double, TestType>(g);
    auto au = allocate_field<double, TestType>("Au", g);
    KokkosSparse::spmv("N", 1.0, a, flat(fields.u), 0.0, flat(au));
    const auto got = to_host_x_fastest(au, g, g.global());
    const double inside = -(2.0 + (n[1] > 1 ? 4.0 : 0.0) + (n[2] > 1 ? 6.0 : 0.0));
    std::size_t wrong = 0, at = 0;
    for (Index k = 0; k < n[2]; ++k)
      for (Index j = 0; j < n[1]; ++j)
        for (Index i = 0; i < n[0]; ++i, ++at)
          wrong += got[at] != (is_boundary(g, {i, j, k}) ? q({i, j, k}) : inside);
    INFO("shape " << n[0] << " x " << n[1] << " x " << n[2]);
    CHECK(wrong == 0);
  }
}

TEMPLATE_TEST_CASE("the assembled operator has the Poisson structure: sorted, symmetric inside",
                   "[cg]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  const Grid g = Grid::whole({6, 5, 7}, {0, 0, 0}, {0.5, 0.25, 2.0});
  const auto a = assemble_poisson_matrix<double, TestType>(g);
  const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.row_map);
  const auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.entries);
  const auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values);
  // Row r is the point at offset r of a field of this layout.
  const Kokkos::View<double***, TestType, Kokkos::HostSpace> shape("shape", 6, 5, 7);
  const auto row_of = [&](Index i, Index j, Index k) {
    return static_cast<int>(&shape(i, j, k) - shape.data());
  };
  REQUIRE(a.numRows() == 210);
  CHECK(a.nnz() == 210 + 4 * 3 * 5 * 6);  // 60 interior rows with 6 neighbours each
  const auto value = [&](int r, int c) {
    for (auto e = rows(r); e < rows(r + 1); ++e)
      if (cols(e) == c) return vals(e);
    return 0.0;
  };
  std::vector<bool> interior_row(210, false);
  for (Index k = 1; k < 6; ++k)
    for (Index j = 1; j < 4; ++j)
      for (Index i = 1; i < 5; ++i) interior_row[row_of(i, j, k)] = true;
  std::size_t problems = 0;
  for (Index k = 0; k < 7; ++k)
    for (Index j = 0; j < 5; ++j)
      for (Index i = 0; i < 6; ++i) {
        const int r = row_of(i, j, k);
        for (auto e = rows(r) + 1; e < rows(r + 1); ++e) problems += cols(e - 1) >= cols(e);
        if (!interior_row[r]) {
          problems += rows(r + 1) - rows(r) != 1 || value(r, r) != 1.0;
          continue;
        }
        problems += value(r, r) != 2 * (4.0 + 16.0 + 0.25);
        problems += value(r, row_of(i + 1, j, k)) != -4.0 || value(r, row_of(i, j - 1, k)) != -16.0;
        problems += value(r, row_of(i, j, k + 1)) != -0.25;
        // Symmetric among the unknowns (what CG needs).
        for (auto e = rows(r); e < rows(r + 1); ++e)
          if (interior_row[cols(e)]) problems += value(cols(e), r) != vals(e);
      }
  CHECK(problems == 0);
}

TEMPLATE_TEST_CASE("the assembled operator equals the matrix-free Jacobi kernel on random fields",
                   "[cg]", float, double) {
  using T = TestType;
  const Real3 spacings[] = {{1, 1, 1}, {0.3, 0.7, 1.9}};
  for (const auto& n : shapes)
    for (const auto& h : spacings) {
      const Grid g = Grid::whole(n, {0, 0, 0}, h);
      const auto left = check_operator_against_stencil<T, Kokkos::LayoutLeft>(
          g, host_plan<Kokkos::LayoutLeft>(g));
      const auto right = check_operator_against_stencil<T, Kokkos::LayoutRight>(
          g, host_plan<Kokkos::LayoutRight>(g));
      INFO("shape " << n[0] << " x " << n[1] << " x " << n[2] << ", worst ratios "
                    << left.max_bound_ratio << ", " << right.max_bound_ratio);
      CHECK(left.passed);
      CHECK(right.passed);
    }
}

TEMPLATE_TEST_CASE("CG recovers a quadratic, which the discrete operator differentiates exactly",
                   "[cg]", float, double) {
  using T = TestType;
  // u = x^2 + y^2 + z^2 on [0,1]^3 with h = 1/8: lap_h u = 6 exactly, so u is the discrete
  // solution. ||u_cg - u||_2 <= ||b - A u_cg|| / lambda_min bounds the error; plus rounding of u.
  const Grid g = Grid::whole({9, 9, 9}, {0, 0, 0}, {0.125, 0.125, 0.125});
  PoissonProblem p;
  p.grid = g;
  const auto exact = [](const Index3& x) {
    return (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) / 64.0;
  };
  p.boundary = exact;
  p.rhs = [](const Index3&) { return 6.0; };
  const CgStop stop{sizeof(T) == 4 ? 1e-6 : 1e-12, 200};
  for (bool left : {true, false}) {
    std::vector<T> u;
    SolveResult result;
    double true_error = 0;
    if (left) {
      CgSolver<T, Kokkos::LayoutLeft> cg(p);
      result = cg.solve(stop);
      u = cg.solution_host();
      true_error = cg.residual().error;
    } else {
      CgSolver<T, Kokkos::LayoutRight> cg(p);
      result = cg.solve(stop);
      u = cg.solution_host();
      true_error = cg.residual().error;
    }
    REQUIRE(result.converged);
    CHECK(result.iterations < 343);  // fewer than the unknowns
    const double bound =
        solution_error_bound(g, true_error) + 4 * std::numeric_limits<T>::epsilon() * 3;
    double worst = 0;
    std::size_t at = 0;
    for (Index k = 0; k < 9; ++k)
      for (Index j = 0; j < 9; ++j)
        for (Index i = 0; i < 9; ++i, ++at)
          worst = std::max(worst, std::abs(u[at] - exact({i, j, k})));
    INFO("max error " << worst << ", bound " << bound << ", iterations " << result.iterations);
    CHECK(worst <= bound);
  }
}

TEST_CASE("CG and Jacobi agree on the solution, CG in far fewer iterations", "[cg]") {
  // A plate with unequal faces and a source: no closed form, but each solver's error is bounded
  // by its residual, so the two solutions differ by at most the sum of the bounds.
  const Grid g = Grid::whole({17, 17, 1}, {0, 0, 0}, {0.0625, 0.0625, 1});
  PoissonProblem p;
  p.grid = g;
  p.boundary = [](const Index3& x) { return x[0] == 0 ? 1.0 : (x[1] == 16 ? -0.5 : 0.0); };
  p.rhs = [](const Index3&) { return -3.0; };
  CgSolver<double, Kokkos::LayoutRight> cg(p);
  const auto cg_result = cg.solve({1e-13, 1000});
  JacobiSolver<double, Kokkos::LayoutLeft> jacobi(p, host_plan<Kokkos::LayoutLeft>(p.grid));
  const auto jacobi_result = jacobi.solve({1e-13, 100000, 1});
  REQUIRE(cg_result.converged);
  REQUIRE(jacobi_result.converged);
  // Jacobi's iteration matrix is symmetric with spectral radius < 1: its last iterate is at least
  // as close as the one whose residual the last error measured.
  const double bound = solution_error_bound(g, cg.residual().error) +
                       solution_error_bound(g, jacobi_result.error) + 1e-14;
  const auto a = cg.solution_host(), b = jacobi.solution_host();
  double worst = 0;
  for (std::size_t q = 0; q < a.size(); ++q) worst = std::max(worst, std::abs(a[q] - b[q]));
  INFO("max difference " << worst << ", bound " << bound << "; iterations CG "
                         << cg_result.iterations << ", Jacobi " << jacobi_result.iterations);
  CHECK(worst <= bound);
  CHECK(worst > 0);  // two different methods: not the same numbers by construction
  CHECK(cg_result.iterations * 10 < jacobi_result.iterations);
}

TEST_CASE("CG's history starts at the initial residual and reports it in Jacobi's measure",
          "[cg]") {
  // From u = 0 inside with boundary 1 at one end of a 1D grid: r0 = 1 / h^2 at the first interior
  // point only, so error0 = (1/h^2) / ((2/h^2) sqrt(N)) = 1 / (2 sqrt(N)) for any h.
  PoissonProblem p;
  p.grid = Grid::whole({25, 1, 1}, {0, 0, 0}, {0.1, 1, 1});
  p.boundary = [](const Index3& x) { return x[0] == 0 ? 1.0 : 0.0; };
  CgSolver<double, Kokkos::LayoutLeft> cg(p);
  const auto result = cg.solve({1e-300, 3});
  REQUIRE(result.history.size() == 4);
  CHECK(result.history[0].iteration == 0);
  CHECK(std::abs(result.history[0].error - 0.5 / 5.0) <= 1e-15);
  CHECK(result.iterations == 3);
  CHECK_FALSE(result.converged);
}
