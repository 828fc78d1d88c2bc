// Jacobi: fixed points, manufactured solutions, strategies, the seed's classic problem, reference.
#include <algorithm>
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "arch/streams.hpp"
#include "core/warp_sum.hpp"
#include "jacobi/blocked.hpp"
#include "jacobi/formula.hpp"
#include "jacobi/jacobi.hpp"
#include "jacobi/jacobi_run.hpp"
#include "limits.hpp"
#include "poisson/poisson_deck.hpp"

using namespace kstencil;

namespace {

// The host's limits (the host's policy order), whatever the backend.
ExecLimits host_limits() {
  ExecLimits limits = default_exec_limits();
  limits.gpu = false;
  return limits;
}

template <class T, class L>
JacobiSolver<T, L> make(const PoissonProblem& p, NormStrategy norm,
                        IterOrder order = IterOrder::automatic,
                        std::array<std::int64_t, 3> tile = {0, 0, 0}, int bound = 0) {
  JacobiKernelConfig c;
  c.layout = layout_of<L>();
  c.iterate = order;
  c.tile = tile;
  c.launch_bounds = bound;
  c.norm = norm;
  c.element_bytes = sizeof(T);
  return JacobiSolver<T, L>(p, plan_jacobi(c, p.grid, host_limits()));
}

PoissonProblem linear_problem(Index3 n, Real3 h) {
  PoissonProblem p;
  p.grid = Grid::whole(n, {0, 0, 0}, h);
  // Small integers and power-of-two spacings: every value and every step of the update is exact.
  const auto linear = [](const Index3& q) { return 3.0 + 2.0 * q[0] - 1.0 * q[1] + 4.0 * q[2]; };
  p.boundary = linear;
  p.initial = linear;
  return p;
}

// Kernel launches, through Kokkos' tool callbacks: "for <label>" / "reduce <label>".
std::vector<std::string> launched;
void record_for(const char* name, std::uint32_t, std::uint64_t*) {
  launched.push_back(std::string("for ") + name);
}
void record_reduce(const char* name, std::uint32_t, std::uint64_t*) {
  launched.push_back(std::string("reduce ") + name);
}

}  // namespace

TEMPLATE_TEST_CASE("a linear field is a fixed point of Jacobi in 1D, 2D and 3D", "[jacobi]",
                   Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  const Index3 shapes[] = {{9, 1, 1}, {7, 6, 1}, {5, 6, 7}};
  for (const auto& n : shapes)
    for (NormStrategy norm : {NormStrategy::reduce, NormStrategy::reduce_range,
                              NormStrategy::atomic, NormStrategy::kokkos_kernels,
                              NormStrategy::team, NormStrategy::blocked, NormStrategy::line}) {
      const PoissonProblem p = linear_problem(n, {0.5, 0.25, 1.0});
      // 3D grids only, and the plan says so.
      if ((norm == NormStrategy::blocked || norm == NormStrategy::line) && n[2] == 1) {
        JacobiKernelConfig c;
        c.norm = norm;
        const JacobiPlan plan = plan_jacobi(c, p.grid, host_limits());
        REQUIRE(plan.problem);
        CHECK(plan.problem->find("needs a 3D grid") != std::string::npos);
        continue;
      }
      auto solver = make<double, TestType>(p, norm);
      const auto before = solver.solution_host();
      for (int it = 0; it < 3; ++it) CHECK(*solver.iterate(true) == 0.0);
      CHECK(solver.solution_host() == before);
    }
}

TEST_CASE("a manufactured Poisson solution is recovered at second order", "[jacobi]") {
  // u = sin(pi x) sin(pi y) on the unit square, lap u = -2 pi^2 u, u = 0 on the boundary.
  constexpr double pi = 3.14159265358979323846;
  std::vector<double> errors;
  for (Index n : {9, 17, 33}) {
    const double h = 1.0 / (n - 1);
    PoissonProblem p;
    p.grid = Grid::whole({n, n, 1}, {0, 0, 0}, {h, h, 1});
    const auto exact = [h](const Index3& q) {
      return std::sin(pi * q[0] * h) * std::sin(pi * q[1] * h);
    };
    p.boundary = exact;
    p.rhs = [&](const Index3& q) { return -2 * pi * pi * exact(q); };
    auto solver = make<double, Kokkos::LayoutRight>(p, NormStrategy::reduce);
    const auto result = solver.solve({1e-15, 200000, 1});
    REQUIRE(result.converged);
    const auto u = solver.solution_host();
    double error = 0;
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i < n; ++i)
        error = std::max(error, std::abs(u[i + n * j] - exact({i, j, 0})));
    errors.push_back(error);
  }
  for (std::size_t r = 1; r < errors.size(); ++r) {
    INFO("errors " << errors[r - 1] << " -> " << errors[r]);
    CHECK(errors[r - 1] / errors[r] > 3.8);
    CHECK(errors[r - 1] / errors[r] < 4.2);
  }
}

TEST_CASE("the seven norm strategies agree, and the iterates are bitwise equal", "[jacobi]") {
  PoissonProblem p;
  p.grid = Grid::whole({13, 11, 9}, {0, 0, 0}, {0.1, 0.2, 0.3});
  p.boundary = [](const Index3& q) { return 1.0 + 0.1 * q[0] - 0.3 * q[2] * q[1]; };
  p.rhs = [](const Index3& q) { return std::cos(0.3 * q[0] + q[1]); };
  auto a = make<double, Kokkos::LayoutLeft>(p, NormStrategy::reduce);
  auto b = make<double, Kokkos::LayoutLeft>(p, NormStrategy::atomic);
  auto c = make<double, Kokkos::LayoutLeft>(p, NormStrategy::reduce_range);
  auto d = make<double, Kokkos::LayoutLeft>(p, NormStrategy::kokkos_kernels);
  auto e = make<double, Kokkos::LayoutRight>(p, NormStrategy::team);
  auto f = make<double, Kokkos::LayoutRight>(p, NormStrategy::blocked);
  auto g = make<double, Kokkos::LayoutLeft>(p, NormStrategy::blocked);
  auto h = make<double, Kokkos::LayoutRight>(p, NormStrategy::line);
  auto i = make<double, Kokkos::LayoutLeft>(p, NormStrategy::line);
  for (int it = 0; it < 20; ++it) {
    const double x = *a.iterate(true), y = *b.iterate(true), z = *c.iterate(true),
                 w = *d.iterate(true), v = *e.iterate(true), r = *f.iterate(true),
                 l = *g.iterate(true), m = *h.iterate(true), n = *i.iterate(true);
    CHECK(std::abs(x - m) <= 1287 * 2.3e-16 * x);
    CHECK(std::abs(x - n) <= 1287 * 2.3e-16 * x);
    CHECK(std::abs(x - v) <= 1287 * 2.3e-16 * x);
    CHECK(std::abs(x - r) <= 1287 * 2.3e-16 * x);
    CHECK(std::abs(x - l) <= 1287 * 2.3e-16 * x);
    // Sums of 1287 positive terms in different orders: within 1287 eps relative (+2 eps for
    // Kokkos Kernels, which forms the difference and squares it in T).
    CHECK(std::abs(x - y) <= 1287 * 2.3e-16 * x);
    CHECK(std::abs(x - z) <= 1287 * 2.3e-16 * x);
    CHECK(std::abs(x - w) <= 1289 * 2.3e-16 * x);
  }
  CHECK(a.solution_host() == b.solution_host());
  CHECK(a.solution_host() == c.solution_host());
  CHECK(a.solution_host() == d.solution_host());
  CHECK(a.solution_host() == e.solution_host());
  CHECK(a.solution_host() == f.solution_host());
  CHECK(a.solution_host() == g.solution_host());
  CHECK(a.solution_host() == h.solution_host());
  CHECK(a.solution_host() == i.solution_host());
}

TEMPLATE_TEST_CASE("a uniform right-hand side kept as a scalar gives the field's bits", "[jacobi]",
                   float, double) {
  PoissonProblem field;
  field.grid = Grid::whole({11, 10, 9}, {0, 0, 0}, {0.1, 0.2, 0.3});
  field.boundary = [](const Index3& q) { return 1.0 + 0.1 * q[0] - 0.3 * q[2] * q[1]; };
  field.rhs = [](const Index3&) { return -1.7; };
  PoissonProblem scalar = field;
  scalar.uniform_rhs = -1.7;
  REQUIRE(make_poisson_fields<TestType, Kokkos::LayoutRight>(scalar, true).rhs.size() == 1);
  REQUIRE(make_poisson_fields<TestType, Kokkos::LayoutRight>(scalar).rhs.size() == 11 * 10 * 9);
  for (NormStrategy norm :
       {NormStrategy::reduce, NormStrategy::team, NormStrategy::blocked, NormStrategy::line}) {
    INFO(to_string(norm));
    auto a = make<TestType, Kokkos::LayoutRight>(field, norm);
    auto b = make<TestType, Kokkos::LayoutRight>(scalar, norm);
    for (int it = 0; it < 5; ++it) CHECK(*a.iterate(true) == *b.iterate(true));
    CHECK(a.solution_host() == b.solution_host());
  }
}

TEMPLATE_TEST_CASE("every layout, order, tile and launch bound matches the host reference bitwise",
                   "[jacobi]", float, double) {
  using T = TestType;
  PoissonProblem p;
  p.grid = Grid::whole({12, 9, 7}, {0, 0, 0}, {0.1, 0.15, 0.2});
  p.boundary = [](const Index3& q) { return std::sin(0.7 * q[0]) + q[1] - 0.5 * q[2]; };
  p.rhs = [](const Index3& q) { return 0.25 * q[0] * q[1]; };
  p.initial = [](const Index3& q) { return 0.01 * (q[0] + 2 * q[1] + 3 * q[2]); };
  const std::array<std::int64_t, 3> tiles[] = {{0, 0, 0}, {4, 4, 4}, {1, 3, 7}};
  std::size_t checked = 0;
  auto check = [&](auto solver) {
    // Recursive summation's bound: partial sums in T where the plan forms them, else in double.
    const double tolerance = jacobi_error_tolerance(solver.plan(), 756);
    std::vector<T> values = solver.solution_host(), next;
    std::vector<T> rhs(values.size(), T(0));
    for (Index k = 0; k < 7; ++k)
      for (Index j = 0; j < 9; ++j)
        for (Index i = 0; i < 12; ++i)
          if (!is_boundary(p.grid, {i, j, k})) rhs[i + 12 * (j + 9 * k)] = T(p.rhs({i, j, k}));
    for (int it = 0; it < 4; ++it) {
      const double error = *solver.iterate(true);
      const double want = std::sqrt(jacobi_reference_iteration(p.grid, values, rhs, next) / 756);
      values.swap(next);
      CHECK(std::abs(error - want) <= tolerance * want);
    }
    REQUIRE(solver.solution_host() == values);
    ++checked;
  };
  for (IterOrder order : {IterOrder::left, IterOrder::right})
    for (const auto& tile : tiles)
      for (int bound : {0, 128})
        for (NormStrategy norm : {NormStrategy::reduce, NormStrategy::reduce_range,
                                  NormStrategy::atomic, NormStrategy::kokkos_kernels,
                                  NormStrategy::team, NormStrategy::blocked, NormStrategy::line}) {
          check(make<T, Kokkos::LayoutLeft>(p, norm, order, tile, bound));
          check(make<T, Kokkos::LayoutRight>(p, norm, order, tile, bound));
        }
  CHECK(checked == 168);
  // line in work items of 1 to 16 rows (the interior's 7 rows along y: whole blocks, a partial
  // last one, one block) swept in tiles of work items (Kokkos' and ones that split the planes'
  // groups and the rows' blocks unevenly), groups of planes or blocks of rows outermost.
  JacobiKernelConfig c;
  c.norm = NormStrategy::line;
  c.element_bytes = sizeof(T);
  const std::array<std::int64_t, 2> line_tiles[] = {{0, 0}, {1, 1}, {2, 3}, {3, 2}};
  for (const int rows : {1, 2, 3, 7, 16})
    for (const auto& tile : line_tiles)
      for (const Layout layout : {Layout::left, Layout::right})
        for (const bool blocks_outer : {false, true}) {
          c.layout = layout;
          JacobiPlan plan = plan_jacobi(c, p.grid, host_limits());
          REQUIRE_FALSE(plan.problem);
          plan.line_rows = rows;
          plan.line_tile = tile;
          plan.line_blocks_outer = blocks_outer;
          if (layout == Layout::right)
            check(JacobiSolver<T, Kokkos::LayoutRight>(p, plan));
          else
            check(JacobiSolver<T, Kokkos::LayoutLeft>(p, plan));
        }
  CHECK(checked == 248);

  // The plans at 256^3 interior points in double. Few-core hosts with 2 MiB of L2 and hand-
  // vectorised rows: 16 rows of 4 planes, the Laplacian's tile (6 planes' rows of 258 doubles take
  // 12384 bytes: 82 rows in 1 MiB, 5 work items; 128 planes a thread, 32 work items). Many-core
  // hosts: one plane, 128 rows (4 rows a row index, 8 KiB, in 1 MiB), blocks outermost; so too
  // where the L2 is unknown (all 256 rows).
  const Grid cube = Grid::whole({258, 258, 258}, {0, 0, 0}, {1, 1, 1});
  c.layout = Layout::right;
  c.element_bytes = 8;
  ExecLimits few = host_limits();
  few.concurrency = few.host_hardware_threads = 2;
  few.core_cache_bytes = 2 << 20;
  const JacobiPlan few_plan = plan_jacobi(c, cube, few);
  if (host_simd_lines_compiled()) {
    CHECK(few_plan.line_planes == 4);
    CHECK(few_plan.line_rows == 16);
    CHECK(few_plan.line_tile == std::array<std::int64_t, 2>{32, 5});
    CHECK_FALSE(few_plan.line_blocks_outer);
  } else {
    CHECK(few_plan.line_rows == 128);
    CHECK(few_plan.line_blocks_outer);
  }
  ExecLimits many = few;
  many.concurrency = many.host_hardware_threads = 16;
  const JacobiPlan many_plan = plan_jacobi(c, cube, many);
  CHECK(many_plan.line_planes == 1);
  CHECK(many_plan.line_rows == 128);
  CHECK(many_plan.line_blocks_outer);
  few.core_cache_bytes = 0;
  CHECK(plan_jacobi(c, cube, few).line_rows == 256);
  CHECK(plan_jacobi(c, cube, few).line_blocks_outer);

  // The kernel line says in which precision the squares are taken and summed.
  CHECK_THAT(many_plan.describe(), Catch::Matchers::EndsWith(", the squares summed in double"));
  c.element_bytes = 4;
  const std::string few_float = plan_jacobi(c, cube, few).describe();
  const std::string many_float = plan_jacobi(c, cube, many).describe();
  if (host_simd_lines_compiled()) {
    CHECK_THAT(few_float, Catch::Matchers::EndsWith(
                              ", the squares of 4 planes summed in float, then in double"));
    CHECK_THAT(many_float, Catch::Matchers::EndsWith(", each square in float, summed in double"));
  } else {
    CHECK_THAT(few_float, Catch::Matchers::EndsWith(", the squares summed in double"));
    CHECK_THAT(many_float, Catch::Matchers::EndsWith(", the squares summed in double"));
  }
}

TEMPLATE_TEST_CASE(
    "line's rows: 1, 2 or 4 planes a work item, whole lines with their ends kept, "
    "match the host reference bitwise",
    "[jacobi]", float, double) {
  using T = TestType;
  // Rows long enough for vectors; the extents (boundary included) along the contiguous axis let
  // the rows with their two ends fill whole cache lines (32) or not (29); planes 64-byte multiples
  // apart (6 x 32 values), so a work item's planes go together on AVX2 and AVX-512 hosts, or not (5
  // x 29); 5 interior planes: a whole group of 4 and a partial one. The right-hand side varies
  // along every axis, so that a plane reading another's would show.
  for (const Index contiguous : {Index(32), Index(29)})
    for (const Layout layout : {Layout::left, Layout::right}) {
      const Index rows = contiguous == 32 ? 6 : 5;
      PoissonProblem p;
      p.grid = layout == Layout::right
                   ? Grid::whole({7, rows, contiguous}, {0, 0, 0}, {0.1, 0.15, 0.2})
                   : Grid::whole({contiguous, rows, 7}, {0, 0, 0}, {0.2, 0.15, 0.1});
      p.boundary = [](const Index3& q) { return std::sin(0.7 * q[0]) + q[1] - 0.5 * q[2]; };
      p.rhs = [](const Index3& q) { return 0.25 * q[0] * q[1] - 0.1 * q[2]; };
      p.initial = [](const Index3& q) { return 0.01 * (q[0] + 2 * q[1] + 3 * q[2]); };
      const Index3 n = p.grid.points;
      const double points = double(n[0]) * n[1] * n[2];  // the error's mean is over all points
      std::vector<T> rhs(n[0] * n[1] * n[2], T(0));
      for (Index k = 0; k < n[2]; ++k)
        for (Index j = 0; j < n[1]; ++j)
          for (Index i = 0; i < n[0]; ++i)
            if (!is_boundary(p.grid, {i, j, k}))
              rhs[i + n[0] * (j + n[1] * k)] = T(p.rhs({i, j, k}));
      JacobiKernelConfig c;
      c.layout = layout;
      c.norm = NormStrategy::line;
      c.element_bytes = sizeof(T);
      const JacobiPlan planned = plan_jacobi(c, p.grid, host_limits());
      // The whole interior: no part updates the rows' ends; a part of an overlapped update whose
      // rows end at points another part updates keeps its rows' ends untouched.
      CHECK(planned.line_ends == RowEnds::input);
      const int fast = layout == Layout::right ? 2 : 0;
      Box part = p.grid.to_local(owned_interior(p.grid));
      part.hi[fast] -= 1;
      CHECK(plan_jacobi(c, p.grid, part, host_limits()).line_ends == RowEnds::none);
      part.hi[fast] += 1;
      part.lo[1] += 1;  // a shell part along y: its rows span the update along the contiguous axis
      CHECK(plan_jacobi(c, p.grid, part, host_limits()).line_ends == RowEnds::input);
      for (const int planes : {1, 2, 4})
        for (const RowEnds ends : {RowEnds::none, RowEnds::input})
          for (const int block : {1, 3}) {
            INFO("extent " << contiguous << (layout == Layout::right ? " right" : " left")
                           << ", planes " << planes << ", ends kept " << (ends == RowEnds::input)
                           << ", rows a block " << block);
            JacobiPlan plan = planned;
            plan.line_planes = planes;
            plan.line_ends = ends;
            plan.line_rows = block;
            const auto check = [&](auto solver) {
              std::vector<T> values = solver.solution_host(), next;
              const double tolerance = jacobi_error_tolerance(solver.plan(), points);
              for (int it = 0; it < 3; ++it) {
                const double error = *solver.iterate(true);
                const double want =
                    std::sqrt(jacobi_reference_iteration(p.grid, values, rhs, next) / points);
                values.swap(next);
                CHECK(std::abs(error - want) <= tolerance * want);
              }
              CHECK(solver.solution_host() == values);
            };
            if (layout == Layout::right)
              check(JacobiSolver<T, Kokkos::LayoutRight>(p, plan));
            else
              check(JacobiSolver<T, Kokkos::LayoutLeft>(p, plan));
          }
    }
}

TEMPLATE_TEST_CASE(
    "stencil_lines: the streamed rows and the portable ones store the same bits "
    "and sum the same squares",
    "[jacobi]", float, double) {
  using T = TestType;
  // 8 planes of 6 rows of 40 or 41 values (layout right, z contiguous): 240 values a plane, a
  // multiple of 64 bytes, or 246, so that the planes' lines start at other offsets; rows of all but
  // the 2 end points (with the ends between them: the 4 rows one span on AVX2 and AVX-512 hosts)
  // starting at 1, and of 29 starting at 5.
  using View = Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::HostSpace>;
  for (const int length : {40, 41}) {
    const View in("in", 8, 6, length), streamed("streamed", 8, 6, length),
        portable("portable", 8, 6, length);
    for (int x = 0; x < 8; ++x)
      for (int y = 0; y < 6; ++y)
        for (int z = 0; z < length; ++z)
          in(x, y, z) = T(std::sin(0.3 * x + 0.7 * y + 0.11 * z * z));
    const std::ptrdiff_t ss = in.stride(0), sy = in.stride(1);
    JacobiFormula<T> formula{T(1.5), T(0.75), T(2.25), T(1) / T(9), true, true, true};
    for (const auto& [start, n] : {std::pair<int, int>{1, length - 2}, std::pair<int, int>{5, 29}})
      for (const RowEnds ends : {RowEnds::none, RowEnds::input, RowEnds::zero}) {
        // Each cache the prefetches can fill (kernel.prefetch_into), one per kind of row ends.
        constexpr PrefetchInto caches[] = {PrefetchInto::l1, PrefetchInto::l2, PrefetchInto::both};
        const Prefetch prefetch{2048, caches[static_cast<int>(ends)]};
        INFO("rows of " << length << ", from " << start << ", " << n << " points, ends "
                        << static_cast<int>(ends) << ", " << prefetch_words(prefetch));
        // f: the input itself, from row 1 on.
        const JacobiPoint<T, true> point{formula, &in(1, 1, start), T(0)};
        const auto rows = [&](const auto planes, auto streaming, const View& out) {
          const double sum = stencil_lines<decltype(streaming)::value, decltype(planes)::value,
                                           Kokkos::LayoutRight, true>(
              &in(1, 1, start), &out(1, 1, start), n, 4, decltype(planes)::value, ss, sy, point,
              ends, prefetch);
          fence_streamed_stores<decltype(streaming)::value>();
          return sum;
        };
        const auto compare = [&](const auto planes) {
          Kokkos::deep_copy(streamed, in);
          Kokkos::deep_copy(portable, in);
          const double a = rows(planes, std::true_type{}, streamed);
          const double b = rows(planes, std::false_type{}, portable);
          // The same squares in other orders: 4 x planes x n terms, each sum within that many eps;
          // the AVX2 and AVX-512 rows sum a vector's planes in T (JacobiPlan::sum_points).
          const double in_t =
              host_simd_lines_compiled() ? (planes + 2) * std::numeric_limits<T>::epsilon() : 0.0;
          CHECK(std::abs(a - b) <=
                (in_t + 2 * 4 * planes * n * std::numeric_limits<double>::epsilon()) * a);
          CHECK(a > 0);
          for (int x = 0; x < 8; ++x)
            for (int y = 0; y < 6; ++y)
              for (int z = 0; z < length; ++z) {
                INFO(x << " " << y << " " << z);
                REQUIRE(std::memcmp(&streamed(x, y, z), &portable(x, y, z), sizeof(T)) == 0);
              }
        };
        compare(std::integral_constant<int, 1>{});
        compare(std::integral_constant<int, 2>{});
        compare(std::integral_constant<int, 4>{});
      }
  }
}

#ifdef KSTENCIL_HOST_SIMD_LINES
// The rows of one vector width (x86::Ymm or x86::Zmm) against the portable rows: S planes of
// Jacobi's point (with and without the norm) and of the Laplacian's, in both layouts.
template <template <class> class Vec, class T, class KokkosLayout>
void check_simd_rows() {
  constexpr bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
  using View = Kokkos::View<T***, KokkosLayout, Kokkos::HostSpace>;
  // 8 planes of 6 rows of 40 or 41 values: 240 values a plane, a multiple of 64 bytes, or 246, so
  // that the planes' lines start at other offsets (realigned before they are streamed); 4 rows of
  // all but the 2 end points starting at 1 (with their ends one span of rows; 40 values: whole
  // lines for double, not for float), of 29 starting at 5 and of 3 starting at 2 (shorter than a
  // vector), each row on its own.
  for (const int length : {40, 41}) {
    const auto make = [length](const std::string& name) {
      return right ? View(name, 8, 6, length) : View(name, length, 6, 8);
    };
    const View in = make("in"), simd = make("simd"), portable = make("portable");
    const auto at = [&](const View& v, int slow, int y, int along) -> T& {
      return right ? v(slow, y, along) : v(along, y, slow);
    };
    for (int x = 0; x < 8; ++x)
      for (int y = 0; y < 6; ++y)
        for (int z = 0; z < length; ++z)
          at(in, x, y, z) = T(std::sin(0.3 * x + 0.7 * y + 0.11 * z * z));
    const std::ptrdiff_t ss = right ? in.stride(0) : in.stride(2), sy = in.stride(1);
    const JacobiFormula<T> formula{T(1.5), T(0.75), T(2.25), T(1) / T(9), true, true, true};
    const StencilPoint<T> laplacian{{T(-2.5), T(1.25), T(0.5), T(0.75)}};
    for (const auto& [start, n] : {std::pair<int, int>{1, length - 2}, std::pair<int, int>{5, 29},
                                   std::pair<int, int>{2, 3}})
      for (const RowEnds ends : {RowEnds::none, RowEnds::input, RowEnds::zero})
        for (const int bytes : {0, 512}) {
          const Prefetch prefetch{bytes, PrefetchInto::l1};
          const bool span = ends != RowEnds::none && sy == n + 2;
          const auto rows = [&](const auto planes, const auto norm, const auto jacobi,
                                const bool vectors, const View& out) {
            constexpr int S = decltype(planes)::value;
            constexpr bool Norm = decltype(norm)::value;
            const auto run = [&](const T* c, T* o, const int count, const auto& point) {
              return vectors
                         ? x86::stencil_lines_simd<Vec, S, KokkosLayout, Norm, PrefetchInto::l1>(
                               c, o, n, count, ss, sy, point, 0, ends, prefetch.bytes)
                         : stencil_lines<false, S, KokkosLayout, Norm>(c, o, n, count, S, ss, sy,
                                                                       point, ends, prefetch);
            };
            const auto from_row = [&](const int y, const int count) {
              const T* c = &at(in, 1, y, start);
              T* o = &at(out, 1, y, start);
              return decltype(jacobi)::value ? run(c, o, count, JacobiPoint<T, true>{formula, c, 0})
                                             : run(c, o, count, laplacian);
            };
            double sum = 0;
            if (!vectors || span)
              sum = from_row(1, 4);
            else
              for (int y = 1; y < 5; ++y) sum += from_row(y, 1);
            fence_streamed_stores<true>();
            return sum;
          };
          const auto compare = [&](const auto planes, const auto norm, const auto jacobi) {
            INFO("rows of " << length << ", planes " << decltype(planes)::value << ", norm "
                            << decltype(norm)::value << ", jacobi " << decltype(jacobi)::value
                            << ", row from " << start << ", " << n << " points, ends "
                            << static_cast<int>(ends) << ", prefetch " << bytes);
            Kokkos::deep_copy(simd, in);
            Kokkos::deep_copy(portable, in);
            const double a = rows(planes, norm, jacobi, true, simd);
            const double b = rows(planes, norm, jacobi, false, portable);
            // The same squares in other orders, the vectors' S planes squared and summed in T
            // (JacobiPlan::sum_points): each sum within its number of terms in eps.
            constexpr int S = decltype(planes)::value;
            CHECK(std::abs(a - b) <= ((S + 2) * std::numeric_limits<T>::epsilon() +
                                      2 * 4 * S * n * std::numeric_limits<double>::epsilon()) *
                                         a);
            CHECK((decltype(norm)::value ? a > 0 : a == 0));
            for (int x = 0; x < 8; ++x)
              for (int y = 0; y < 6; ++y)
                for (int z = 0; z < length; ++z) {
                  INFO(x << " " << y << " " << z);
                  REQUIRE(std::memcmp(&at(simd, x, y, z), &at(portable, x, y, z), sizeof(T)) == 0);
                }
          };
          using std::integral_constant, std::true_type, std::false_type;
          compare(integral_constant<int, 1>{}, true_type{}, true_type{});
          compare(integral_constant<int, 2>{}, true_type{}, true_type{});
          compare(integral_constant<int, 4>{}, true_type{}, true_type{});
          compare(integral_constant<int, 4>{}, false_type{}, true_type{});
          compare(integral_constant<int, 1>{}, false_type{}, false_type{});
          compare(integral_constant<int, 4>{}, false_type{}, false_type{});
        }
  }
}
#endif

TEMPLATE_TEST_CASE(
    "stencil_lines_simd: the AVX2 rows (and AVX-512's, where compiled) store the portable rows' "
    "bits and sum the same squares, whatever this build's widest vectors",
    "[jacobi]", float, double) {
#ifdef KSTENCIL_HOST_SIMD_LINES
  check_simd_rows<x86::Ymm, TestType, Kokkos::LayoutRight>();
  check_simd_rows<x86::Ymm, TestType, Kokkos::LayoutLeft>();
#ifdef __AVX512F__
  check_simd_rows<x86::Zmm, TestType, Kokkos::LayoutRight>();
  check_simd_rows<x86::Zmm, TestType, Kokkos::LayoutLeft>();
#endif
#else
  // Without AVX2 the rows are the portable ones: stencil_lines_simd is not compiled.
  CHECK_FALSE(host_simd_lines_compiled());
#endif
}

TEST_CASE("seed 004's classic problem prints the seed's history, whatever the layout and norm",
          "[jacobi]") {
  // 4194304 floats, ends at 5 and 10: the seed's published output, line by line.
  const std::string seed =
      "Iteration = 0 error = 0.00272958\n"
      "Iteration = 10 error = 0.00034546\n"
      "Iteration = 20 error = 0.000210903\n"
      "Iteration = 30 error = 0.000157015\n"
      "Iteration = 40 error = 0.000127122\n"
      "Iteration = 50 error = 0.00010783\n";
#ifdef __SANITIZE_ADDRESS__
  // Under the sanitizers, where the whole history takes minutes, each combination runs the first
  // 11 iterations, which print the seed's first two lines; make test runs the whole history.
  const std::int64_t iterations = 11;
  const std::string expected = seed.substr(0, seed.find("Iteration = 20"));
#else
  const std::int64_t iterations = 1000;
  const std::string& expected = seed;
#endif
  PoissonProblem p;
  p.grid = Grid::whole({4194304, 1, 1}, {0, 0, 0}, {1, 1, 1});
  p.boundary = [](const Index3& q) { return q[0] == 0 ? 5.0 : 10.0; };
  for (NormStrategy norm : {NormStrategy::reduce, NormStrategy::reduce_range, NormStrategy::atomic,
                            NormStrategy::kokkos_kernels, NormStrategy::team}) {
    for (bool left : {true, false}) {
      std::ostringstream printed;
      const auto on_error = [&](std::int64_t it, double error) {
        if (it % 10 == 0) printed << "Iteration = " << it << " error = " << error << "\n";
      };
      SolveResult result;
      if (left)
        result = make<float, Kokkos::LayoutLeft>(p, norm, IterOrder::left, {256, 1, 1})
                     .solve({1e-4, iterations, 1}, on_error);
      else
        result = make<float, Kokkos::LayoutRight>(p, norm, IterOrder::left, {256, 1, 1})
                     .solve({1e-4, iterations, 1}, on_error);
      INFO("norm " << to_string(norm) << (left ? " layout left" : " layout right"));
      CHECK(printed.str() == expected);
      CHECK(result.converged == (iterations > 57));
      CHECK(result.iterations == std::min<std::int64_t>(iterations, 57));
    }
  }
}

TEST_CASE("norm every k iterations computes the same errors at those iterations", "[jacobi]") {
  PoissonProblem p;
  p.grid = Grid::whole({64, 1, 1}, {0, 0, 0}, {1, 1, 1});
  p.boundary = [](const Index3& q) { return q[0] == 0 ? 1.0 : -2.0; };
  auto every = make<double, Kokkos::LayoutRight>(p, NormStrategy::reduce);
  auto third = make<double, Kokkos::LayoutRight>(p, NormStrategy::reduce);
  const auto a = every.solve({1e-30, 30, 1});
  const auto b = third.solve({1e-30, 30, 3});
  REQUIRE(b.history.size() == 10);
  for (const auto& h : b.history) {
    CHECK(h.iteration % 3 == 0);
    CHECK(h.error == a.history[h.iteration].error);
  }
  CHECK(every.solution_host() == third.solution_host());
}

TEST_CASE("a pipelined solve ends as the plain one: iterations, errors, checkpoints, iterate",
          "[jacobi]") {
  // The pipelined loop launches an iteration before it reads the error of the one before and
  // undoes an iteration launched past the stop. On a host back end the launches complete at once,
  // but every decision of the loop (speculative launch, undo, stops, checkpoints) is the same code.
  const auto compare = [](auto&& plain, auto&& pipelined, const JacobiStop& stop) {
    plain.set_pipelined(false);
    pipelined.set_pipelined(true);
    std::vector<std::pair<std::int64_t, decltype(plain.solution_host())>> saved[2];
    const auto run = [&](auto& solver, int which) {
      SolveContinuation from;
      from.checkpoint_every = 7;
      from.checkpoint = [&](const SolveResult& so_far) {
        saved[which].emplace_back(so_far.iterations, solver.solution_host());
      };
      return solver.solve(stop, {}, from);
    };
    const SolveResult a = run(plain, 0), b = run(pipelined, 1);
    CHECK(a.iterations == b.iterations);
    CHECK(a.converged == b.converged);
    CHECK(a.error == b.error);
    REQUIRE(a.history.size() == b.history.size());
    for (std::size_t n = 0; n < a.history.size(); ++n) {
      CHECK(a.history[n].iteration == b.history[n].iteration);
      CHECK(a.history[n].error == b.history[n].error);
    }
    CHECK(saved[0] == saved[1]);
    CHECK(plain.solution_host() == pipelined.solution_host());
    return a;
  };
  PoissonProblem p1;
  p1.grid = Grid::whole({64, 1, 1}, {0, 0, 0}, {1, 1, 1});
  p1.boundary = [](const Index3& q) { return q[0] == 0 ? 1.0 : -2.0; };
  PoissonProblem p3;
  p3.grid = Grid::whole({9, 8, 10}, {0, 0, 0}, {1, 1, 1});
  p3.boundary = [](const Index3& q) { return q[0] + 2.0 * q[2] - q[1]; };
  // Not atomic: its sums' order changes from run to run, and so do its errors' last bits.
  for (const PoissonProblem* p : {&p1, &p3})
    for (NormStrategy norm :
         {NormStrategy::reduce, NormStrategy::reduce_range, NormStrategy::kokkos_kernels,
          NormStrategy::team, NormStrategy::blocked, NormStrategy::line}) {
      if ((norm == NormStrategy::blocked || norm == NormStrategy::line) && p == &p1)
        continue;  // 3D grids only
      // The errors of 40 iterations; tolerances between them stop at chosen iterations.
      const auto history = make<double, Kokkos::LayoutRight>(*p, norm).solve({-1.0, 40, 1}).history;
      REQUIRE(history.size() == 40);
      for (int every : {1, 3})
        for (const std::int64_t stop_at : {0, 1, 6, 7, 16, 20, 39}) {
          INFO("norm " << to_string(norm) << ", grid " << p->grid.points[0] << ", every " << every
                       << ", error at or below the tolerance from iteration " << stop_at);
          // Stops after the first iteration with a computed error at or below the tolerance.
          const double tolerance = history[stop_at].error;
          const SolveResult r =
              compare(make<double, Kokkos::LayoutRight>(*p, norm),
                      make<double, Kokkos::LayoutRight>(*p, norm), {tolerance, 40, every});
          std::int64_t last = stop_at;
          while (last % every != 0) ++last;
          if (last < 40) {
            CHECK(r.iterations == last + 1);
          } else {
            CHECK(r.iterations == 40);
          }
        }
      // Stopped by max_iterations, with and without an error at the last iteration.
      for (const std::int64_t max : {1, 2, 15, 16, 17, 33})
        compare(make<float, Kokkos::LayoutLeft>(*p, norm),
                make<float, Kokkos::LayoutLeft>(*p, norm), {0.0, max, 2});
    }
}

TEST_CASE("the default norm: line on hosts and blocked on GPUs for 3D grids, else reduce / team",
          "[jacobi]") {
  const Grid three = Grid::whole({8, 8, 8}, {0, 0, 0}, {1, 1, 1});
  const Grid two = Grid::whole({8, 8, 1}, {0, 0, 0}, {1, 1, 1});
  const Grid one = Grid::whole({8, 1, 1}, {0, 0, 0}, {1, 1, 1});
  CHECK(default_norm_strategy(host_limits(), three) == NormStrategy::line);
  CHECK(default_norm_strategy(host_limits(), two) == NormStrategy::reduce);
  CHECK(default_norm_strategy(host_limits(), one) == NormStrategy::reduce);
  CHECK(default_norm_strategy(h100_limits(), three) == NormStrategy::blocked);
  CHECK(default_norm_strategy(h100_limits(), two) == NormStrategy::team);
  CHECK(default_norm_strategy(h100_limits(), one) == NormStrategy::team);
  CHECK(parse_norm_strategy("line") == NormStrategy::line);
  // line is a host kernel: a GPU plan says so.
  JacobiKernelConfig line;
  line.norm = NormStrategy::line;
  const JacobiPlan on_gpu = plan_jacobi(line, three, h100_limits());
  REQUIRE(on_gpu.problem);
  CHECK(on_gpu.problem->find("host kernel") != std::string::npos);
  CHECK_FALSE(plan_jacobi(line, three, host_limits()).problem);
  CHECK(to_string(NormStrategy::line) == "line");
}

TEST_CASE("each norm strategy launches the kernels it is named for", "[jacobi]") {
  // The strategies give the same numbers, so only the launches tell them apart (a strategy that
  // silently ran another's kernels would pass every other test).
  PoissonProblem p;
  p.grid = Grid::whole({10, 8, 6}, {0, 0, 0}, {1, 1, 1});
  p.boundary = [](const Index3& q) { return double(q[0]); };
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record_for);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(record_reduce);
  const auto launches = [&](NormStrategy norm, bool with_norm) {
    auto solver = make<double, Kokkos::LayoutRight>(p, norm);
    launched.clear();
    solver.iterate(with_norm);
    std::vector<std::string> ours;  // without Kokkos' own deep_copy kernels
    for (const auto& name : launched)
      if (name.find("for Kokkos::") != 0) ours.push_back(name);
    return ours;
  };
  using List = std::vector<std::string>;
  CHECK(launches(NormStrategy::reduce, true) == List{"reduce kstencil::jacobi::update_reduce"});
  CHECK(launches(NormStrategy::reduce_range, true) ==
        List{"reduce kstencil::jacobi::update_reduce_range"});
  CHECK(launches(NormStrategy::atomic, true) == List{"for kstencil::jacobi::update_atomic"});
  CHECK(launches(NormStrategy::team, true) == List{"for kstencil::jacobi::update_team_sums"});
  CHECK(launches(NormStrategy::team, false) == List{"for kstencil::jacobi::update_team"});
  CHECK(launches(NormStrategy::blocked, true) ==
        List{"for kstencil::jacobi::update_blocked_sums", "reduce kstencil::jacobi::item_sums"});
  CHECK(launches(NormStrategy::blocked, false) == List{"for kstencil::jacobi::update_blocked"});
  CHECK(launches(NormStrategy::line, true) == List{"reduce kstencil::jacobi::line_reduce"});
  CHECK(launches(NormStrategy::line, false) == List{"for kstencil::jacobi::line"});
  const List kk = launches(NormStrategy::kokkos_kernels, true);
  INFO("kokkos-kernels launched: " << Catch::Detail::stringify(kk));
  REQUIRE(kk.size() == 3);
  CHECK(kk[0] == "for kstencil::jacobi::update");
  CHECK(kk[1].find("for KokkosBlas::update") == 0);
  CHECK(kk[2].find("reduce KokkosBlas::Nrm2") == 0);
  for (NormStrategy norm : {NormStrategy::reduce, NormStrategy::reduce_range, NormStrategy::atomic,
                            NormStrategy::kokkos_kernels})
    CHECK(launches(norm, false) == List{"for kstencil::jacobi::update"});
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(nullptr);
}

TEST_CASE("the plan fills Kokkos' default tile entries once and says why a tile cannot run",
          "[jacobi]") {
  const Grid g = Grid::whole({10, 8, 6}, {0, 0, 0}, {1, 1, 1});
  JacobiKernelConfig c;
  c.iterate = IterOrder::left;
  c.tile = {4, 0, 2};
  const JacobiPlan plan = plan_jacobi(c, g, host_limits());
  REQUIRE_FALSE(plan.problem);
  CHECK(plan.describe() == "policy (i,j,k), Iterate::Left");
  CHECK(plan.lower == Index3{1, 1, 1});
  CHECK(plan.upper == Index3{9, 7, 5});
  CHECK(plan.tile[0] == 4);
  CHECK(plan.tile[1] >= 1);
  CHECK(plan.tile[2] == 2);
  CHECK(plan.box_lo == std::array<int, 3>{1, 1, 1});
  CHECK(plan.box_extent == std::array<int, 3>{8, 6, 4});
  CHECK(plan.box_size == 192);
  // "auto" on a 1D grid iterates as layout left does, in either layout.
  JacobiKernelConfig line;
  const Grid g1 = Grid::whole({64, 1, 1}, {0, 0, 0}, {1, 1, 1});
  CHECK(plan_jacobi(line, g1, host_limits()).describe() == "policy (i,j,k), Iterate::Left");
  CHECK(plan_jacobi(line, g, host_limits()).describe() == "policy (i,j,k), Iterate::Right");
  // An H100's limits: 32 x 8 x 8 = 2048 threads per block.
  const ExecLimits gpu = h100_limits();
  c.tile = {32, 8, 8};
  const JacobiPlan big = plan_jacobi(c, g, gpu);
  REQUIRE(big.problem);
  CHECK(big.problem->find("2048 threads per block exceed 1024") != std::string::npos);
  PoissonProblem p;
  p.grid = g;
  p.boundary = [](const Index3&) { return 1.0; };
  CHECK_THROWS_AS((JacobiSolver<double, Kokkos::LayoutRight>(p, big)), std::invalid_argument);
  // A plan for other fields: another layout, another grid.
  CHECK_THROWS_AS((JacobiSolver<double, Kokkos::LayoutLeft>(p, plan)), std::invalid_argument);
  p.grid = Grid::whole({10, 8, 7}, {0, 0, 0}, {1, 1, 1});
  CHECK_THROWS_AS((JacobiSolver<double, Kokkos::LayoutRight>(p, plan)), std::invalid_argument);
}

TEMPLATE_TEST_CASE(
    "on a GPU the update runs in runs of 16 bytes (float quads, double pairs) or pairs where rows "
    "hold them, bitwise as the reference",
    "[jacobi]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // The GPU's plan run on this backend, in float and double: blocked in runs along the
  // contiguous axis (the Laplacian's GPU default) on a grid whose contiguous extent holds them
  // (float quads at 36, pairs at 10 and 34), one point per work item where it is odd; all with
  // the norm's per-work-item sums.
  const bool right = std::is_same<TestType, Kokkos::LayoutRight>::value;
  const auto check = [&](auto zero, const Index contiguous) {
    using T = decltype(zero);
    PoissonProblem p;
    p.grid = Grid::whole(right ? Index3{9, 7, contiguous} : Index3{contiguous, 7, 9}, {0, 0, 0},
                         {0.1, 0.15, 0.2});
    p.boundary = [](const Index3& q) { return std::sin(0.7 * q[0]) + q[1] - 0.5 * q[2]; };
    p.rhs = [](const Index3& q) { return 0.25 * q[0] * q[1]; };
    p.initial = [](const Index3& q) { return 0.01 * (q[0] + 2 * q[1] + 3 * q[2]); };
    JacobiKernelConfig c;
    c.layout = layout_of<TestType>();
    c.norm = NormStrategy::blocked;
    c.element_bytes = sizeof(T);
    ExecLimits gpu = h100_limits();
    gpu.summed_lanes = warp_sum_lanes;  // the lanes this build's kernels add
    const JacobiPlan plan = plan_jacobi(c, p.grid, gpu);
    REQUIRE_FALSE(plan.problem);
    REQUIRE(plan.blocked);
    INFO("contiguous extent " << contiguous << ", " << sizeof(T)
                              << "-byte values: " << plan.describe());
    const int run = sizeof(T) == 4 && contiguous % 4 == 0 ? 4 : contiguous % 2 == 0 ? 2 : 1;
    CHECK(plan.blocked->params.m_contiguous == run);
    JacobiSolver<T, TestType> solver(p, plan);
    std::vector<T> values = solver.solution_host(), next;
    std::vector<T> rhs(values.size(), T(0));
    const Index3 n = p.grid.points;
    for (Index k = 0; k < n[2]; ++k)
      for (Index j = 0; j < n[1]; ++j)
        for (Index i = 0; i < n[0]; ++i)
          if (!is_boundary(p.grid, {i, j, k}))
            rhs[i + n[0] * (j + n[1] * k)] = static_cast<T>(p.rhs({i, j, k}));
    const double points = static_cast<double>(n[0] * n[1] * n[2]);  // the norm's mean
    // A work item sums its blocks' squared changes in T (4 x 2 blocks, 2 of them in runs: 64
    // points in quads, 32 in pairs; one point a work item: float layout left 8 x 1 x 4, else
    // 4 x 2 x 3), the rest in double. One average square left out (1 / points relative) is over
    // ten times the bound.
    const bool eight_by_one = run == 1 && sizeof(T) == 4 && !right;
    CHECK(plan.sum_points == (eight_by_one ? 32 : run == 1 ? 24 : 16 * run));
    const double tolerance = jacobi_error_tolerance(plan, points);
    CHECK(tolerance * points < 0.1);
    for (int it = 0; it < 4; ++it) {
      const double error = *solver.iterate(true);
      const double want = std::sqrt(jacobi_reference_iteration(p.grid, values, rhs, next) / points);
      values.swap(next);
      CHECK(std::abs(error - want) <= tolerance * want);
    }
    REQUIRE(solver.solution_host() == values);
  };
  for (Index contiguous : {10, 34, 36, 11}) {
    check(0.0f, contiguous);
    check(0.0, contiguous);
  }
}

TEST_CASE("on CUDA the blocked norm's warps add their lanes' sums: the launch runs to whole warps",
          "[jacobi]") {
  // The H100 plan of blocked with the norm: one slot per warp of 32 lanes along the contiguous
  // axis. 199 points (odd: one point a work item): items 0..198 (the row ends included) from an
  // aligned start, padded to 224; 128 threads along the contiguous axis. The padding items update
  // nothing (their c is past the row end) and add 0 to their warp's sum (checked on the device:
  // docs/PERFORMANCE.md, Jacobi).
  for (const Layout layout : {Layout::right, Layout::left}) {
    const bool right = layout == Layout::right;
    const Grid g =
        Grid::whole(right ? Index3{20, 24, 199} : Index3{199, 24, 20}, {0, 0, 0}, {1, 1, 1});
    JacobiKernelConfig c;
    c.layout = layout;
    c.norm = NormStrategy::blocked;
    const JacobiPlan plan = plan_jacobi(c, g, h100_limits());
    INFO(plan.describe());
    REQUIRE_FALSE(plan.problem);
    REQUIRE(plan.blocked->launch);
    const LaplacianLaunch& l = *plan.blocked->launch;
    CHECK(plan.sum_lanes == 32);
    CHECK(l.tile[0] == 128);
    CHECK(l.lower[0] == 0);
    CHECK(l.upper[0] == 224);
    CHECK(plan.describe().find("norm sums added over 32 lanes a warp") != std::string::npos);
    CHECK(jacobi_detail::blocked_slots(l, plan.sum_lanes) ==
          7 * (l.upper[1] - l.lower[1]) * (l.upper[2] - l.lower[2]));
    // The same plan where a warp's lanes are not one row's: a tile of 16 along the contiguous
    // axis, or (layout right iterated as left) the contiguous axis not the policy's first, whose
    // tile of 32 is along x: one slot per work item, the range as planned.
    for (const bool narrow : {true, false}) {
      if (!narrow && !right) continue;
      JacobiKernelConfig other = c;
      if (narrow) {
        other.tile =
            right ? std::array<std::int64_t, 3>{1, 8, 16} : std::array<std::int64_t, 3>{16, 8, 1};
      } else {
        other.iterate = IterOrder::left;
        other.tile = {32, 4, 1};
      }
      const JacobiPlan each = plan_jacobi(other, g, h100_limits());
      INFO(each.describe() << " " << each.problem.value_or(""));
      REQUIRE_FALSE(each.problem);
      CHECK(each.sum_lanes == 1);
      CHECK(each.describe().find("lanes a warp") == std::string::npos);
      CHECK(to_axis_order(each.blocked->mapping, each.blocked->launch->upper)[right ? 2 : 0] ==
            199);
    }
    // A build whose kernels add no lanes refuses such a plan rather than lose sums.
    PoissonProblem p;
    p.grid = g;
    p.boundary = [](const Index3&) { return 1.0; };
    if (warp_sum_lanes != 32) {
      if (right)
        CHECK_THROWS_AS((JacobiSolver<double, Kokkos::LayoutRight>(p, plan)),
                        std::invalid_argument);
      else
        CHECK_THROWS_AS((JacobiSolver<double, Kokkos::LayoutLeft>(p, plan)), std::invalid_argument);
    }
  }
}

TEMPLATE_TEST_CASE(
    "team moves 16 bytes of a row an access where the rows hold them, bitwise as "
    "the reference",
    "[jacobi]", float, double) {
  // Packets of 4 floats or 2 doubles cover the allocated rows from their aligned starts; the row
  // ends keep their values and add nothing to the sum. Rows of 66 points hold whole packets of
  // doubles, not of floats. Each grid runs the host's plan (a team a thread, long pieces) and a
  // GPU's plan cut into teams of one thread (4 packets a piece, 16 planes a slab), so that pieces,
  // slabs and the last team's sum over many teams run on this backend too.
  using T = TestType;
  constexpr int packet = 16 / sizeof(T);
  const Index3 shapes[] = {{64, 1, 1}, {66, 1, 1}, {16, 9, 1}, {9, 16, 1}, {12, 5, 36}, {13, 5, 7}};
  int packed = 0, single = 0;
  for (const Index3& n : shapes)
    for (const Layout layout : {Layout::left, Layout::right})
      for (const bool gpu_shape : {false, true}) {
        PoissonProblem p;
        p.grid = Grid::whole(n, {0, 0, 0}, {0.1, 0.15, 0.2});
        p.boundary = [](const Index3& q) { return std::sin(0.7 * q[0]) + q[1] - 0.5 * q[2]; };
        p.rhs = [](const Index3& q) { return 0.25 * q[0] * q[1] - q[2]; };
        p.initial = [](const Index3& q) { return 0.01 * (q[0] + 2 * q[1] + 3 * q[2]); };
        JacobiKernelConfig c;
        c.layout = layout;
        c.norm = NormStrategy::team;
        c.element_bytes = sizeof(T);
        ExecLimits limits = host_limits();
        if (gpu_shape) {
          limits = h100_limits();
          c.tile = {1, 1, 1};  // teams of one thread along the contiguous axis
        }
        const JacobiPlan plan = plan_jacobi(c, p.grid, limits);
        REQUIRE_FALSE(plan.problem);
        const Index row = plan.team_row;
        INFO("grid " << n[0] << " x " << n[1] << " x " << n[2] << ", " << plan.describe());
        CHECK(row == n[plan.team_axes[0]]);
        CHECK(plan.team_width == (row % packet == 0 ? packet : 1));
        // The rows beside a row that the update reads: none in 1D, the other axis's in 2D (z is
        // collapsed: y along team_axes[1] in layout left, x along team_axes[2] in layout right),
        // both in 3D.
        const int dims = (n[0] > 1) + (n[1] > 1) + (n[2] > 1);
        CHECK(plan.team_rows == (dims == 1 ? 0 : dims == 3 ? 3 : layout == Layout::left ? 1 : 2));
        (plan.team_width > 1 ? packed : single) += 1;
        if (gpu_shape) {
          // Teams of one thread: a piece of 1-16 packets (nearest a wave of teams: here, as many
          // teams as the row has packets), or of up to 8 points.
          CHECK(plan.team_size == 1);
          CHECK(plan.team_chunk == (plan.team_width > 1 ? packet : std::min<Index>(row - 2, 8)));
          // The update box's rows along team_axes[1] by its slabs of team_march planes.
          const Index slabs =
              (plan.box_extent[plan.team_axes[2]] + plan.team_march - 1) / plan.team_march;
          CHECK(plan.league == (plan.team_width > 1 ? row / packet : (row - 3) / 8 + 1) *
                                   plan.box_extent[plan.team_axes[1]] * slabs);
        }
        std::vector<T> values, next;
        double sum_of_error = 0;
        const auto run = [&](auto solver) {
          values = solver.solution_host();
          std::vector<T> rhs(values.size(), T(0));
          for (Index k = 0; k < n[2]; ++k)
            for (Index j = 0; j < n[1]; ++j)
              for (Index i = 0; i < n[0]; ++i)
                if (!is_boundary(p.grid, {i, j, k}))
                  rhs[i + n[0] * (j + n[1] * k)] = static_cast<T>(p.rhs({i, j, k}));
          const double points = static_cast<double>(n[0] * n[1] * n[2]);
          // A thread sums its packets' squared changes over its planes in T, the rest in double.
          CHECK(plan.sum_points == (plan.team_width > 1 ? plan.team_width * plan.team_march : 0));
          const double tolerance = jacobi_error_tolerance(plan, points);
          for (int it = 0; it < 5; ++it) {
            const bool norm =
                it != 2;  // an iteration without the norm runs the kernel without sums
            const auto error = solver.iterate(norm);
            const double want =
                std::sqrt(jacobi_reference_iteration(p.grid, values, rhs, next) / points);
            values.swap(next);
            REQUIRE(error.has_value() == norm);
            if (norm) CHECK(std::abs(*error - want) <= tolerance * want);
            if (norm) sum_of_error += *error;
          }
          REQUIRE(solver.solution_host() == values);
        };
        if (layout == Layout::left)
          run(JacobiSolver<T, Kokkos::LayoutLeft>(p, plan));
        else
          run(JacobiSolver<T, Kokkos::LayoutRight>(p, plan));
        CHECK(sum_of_error > 0);
      }
  CHECK(packed >= 8);
  CHECK(single >= 8);
}

TEST_CASE("a host's 1D reduce tile: 65536 points, at least one tile a thread", "[jacobi]") {
  ExecLimits host;
  host.concurrency = 16;
  const auto tile_of = [&](std::int64_t n) {
    return default_jacobi_kernel(host, Grid::whole({n, 1, 1}, {0, 0, 0}, {1, 1, 1}), Layout::right,
                                 IterOrder::automatic, NormStrategy::reduce)
        .tile;
  };
  CHECK(tile_of(4194304) == std::array<std::int64_t, 3>{65536, 1, 1});
  CHECK(tile_of(4096) == std::array<std::int64_t, 3>{256, 1, 1});
  CHECK(tile_of(4097) == std::array<std::int64_t, 3>{257, 1, 1});
  CHECK(tile_of(5) == std::array<std::int64_t, 3>{1, 1, 1});
}

TEST_CASE("team's packets: the GPU plan of seed 004's problem, and where packets do not fit",
          "[jacobi]") {
  const Grid line = Grid::whole({4194304, 1, 1}, {0, 0, 0}, {1, 1, 1});
  // What a deck gets: the backend's default kernel for the strategy.
  JacobiKernelConfig c = default_jacobi_kernel(h100_limits(), line, Layout::right,
                                               IterOrder::automatic, NormStrategy::team);
  c.element_bytes = 4;
  const JacobiPlan plan = plan_jacobi(c, line, h100_limits());
  INFO(plan.problem.value_or("no problem"));
  REQUIRE_FALSE(plan.problem);
  CHECK(plan.team_width == 4);
  CHECK(plan.team_size == 256);
  // 8 packets a thread: 512 teams, one wave of 4 teams an SM on 132 SMs (528).
  CHECK(plan.team_chunk == 8 * 256 * 4);
  CHECK(plan.team_chunks == 512);
  CHECK(plan.league == 512);
  CHECK(plan.describe() ==
        "teams of 256 threads along x, 4 points an access, up to 8 accesses a thread, 1 plane a "
        "team; the last team adds the sums");
  // The packets a thread that put a league nearest that wave, at most 16 accesses a thread over a
  // team's planes, measured best on H200 (docs/PERFORMANCE.md): 16 for the problem in double (512
  // teams); 1 for 4096^2 in layout right (rows along y, 16 rows a team: 256 slabs of 4 pieces of
  // floats or 8 of doubles); 8 for 4096^2 doubles in layout left (a row a team: 4094 teams, the
  // fewest).
  c.element_bytes = 8;
  const JacobiPlan doubles = plan_jacobi(c, line, h100_limits());
  CHECK(doubles.team_chunk == 16 * 256 * 2);
  CHECK(doubles.league == 512);
  const Grid square = Grid::whole({4096, 4096, 1}, {0, 0, 0}, {1, 1, 1});
  JacobiKernelConfig s = default_jacobi_kernel(h100_limits(), square, Layout::right,
                                               IterOrder::automatic, NormStrategy::team);
  s.element_bytes = 4;
  const JacobiPlan right = plan_jacobi(s, square, h100_limits());
  CHECK(right.team_axes[0] == 1);
  CHECK(right.team_march == 16);
  CHECK(right.team_chunk == 1 * 256 * 4);
  CHECK(right.league == 1024);
  s.element_bytes = 8;
  const JacobiPlan right_doubles = plan_jacobi(s, square, h100_limits());
  CHECK(right_doubles.team_chunk == 1 * 256 * 2);
  CHECK(right_doubles.league == 2048);
  s = default_jacobi_kernel(h100_limits(), square, Layout::left, IterOrder::automatic,
                            NormStrategy::team);
  s.element_bytes = 8;
  const JacobiPlan left = plan_jacobi(s, square, h100_limits());
  CHECK(left.team_axes[0] == 0);
  CHECK(left.team_chunk == 8 * 256 * 2);
  CHECK(left.league == 4094);  // the interior rows
  c.element_bytes = 4;
  // A part of an overlapped update: its row ends may be another part's points.
  const Box part{{1, 0, 0}, {4194000, 1, 1}};
  CHECK(plan_jacobi(c, line, part, h100_limits()).team_width == 1);
  // Rows of doubles that hold whole packets of two, not of four floats.
  const Grid odd = Grid::whole({66, 34, 1}, {0, 0, 0}, {1, 1, 1});
  CHECK(plan_jacobi(c, odd, h100_limits()).team_width == 1);
  c.element_bytes = 8;
  CHECK(plan_jacobi(c, odd, h100_limits()).team_width == 2);
  // A plan made for floats refuses doubles rather than misread their rows.
  PoissonProblem p;
  p.grid = Grid::whole({64, 34, 1}, {0, 0, 0}, {1, 1, 1});
  p.boundary = [](const Index3&) { return 1.0; };
  c.element_bytes = 4;
  c.layout = Layout::left;  // rows along x, 64 points
  const JacobiPlan floats = plan_jacobi(c, p.grid, host_limits());
  REQUIRE(floats.team_width == 4);
  CHECK_NOTHROW(JacobiSolver<float, Kokkos::LayoutLeft>(p, floats));
  CHECK_THROWS_AS((JacobiSolver<double, Kokkos::LayoutLeft>(p, floats)), std::invalid_argument);
}

TEST_CASE(
    "kernel.blocks_per_item sets the blocked norm's blocks per work item under variant mdrange; "
    "elsewhere it is refused naming the key",
    "[jacobi]") {
  using Catch::Matchers::ContainsSubstring;
  const auto setup = [](const std::vector<std::string>& overrides) {
    return jacobi_setup_from_deck(
        Deck::parse("[grid]\nnx = 18\nny = 10\nnz = 34\n", "j.toml", overrides, jacobi_schema()),
        h100_limits());
  };
  // auto: the Laplacian's GPU default, 2 blocks in pairs (34 doubles along z).
  const JacobiSetup by_default = setup({});
  REQUIRE(by_default.plan.blocked);
  CHECK(by_default.plan.blocked->params.m_contiguous == 2);
  CHECK(by_default.plan.blocked->params.blocks_per_item == 2);
  const JacobiSetup three =
      setup({"kernel.variant=mdrange", "jacobi.norm=blocked", "kernel.blocks_per_item=3"});
  REQUIRE(three.plan.blocked);
  CHECK(three.plan.blocked->params.blocks_per_item == 3);
  CHECK(three.plan.sum_points == 4 * 2 * 2 * 3);
  CHECK_THAT(three.plan.describe(), ContainsSubstring("3 blocks per work item"));
  for (const auto& overrides : std::vector<std::vector<std::string>>{
           {"kernel.blocks_per_item=3"},
           {"kernel.variant=mdrange", "jacobi.norm=team", "kernel.blocks_per_item=3"}})
    CHECK_THROWS_WITH(setup(overrides), ContainsSubstring("j.toml: [kernel] blocks_per_item = 3") &&
                                            ContainsSubstring("kernel.variant = \"mdrange\""));
}
