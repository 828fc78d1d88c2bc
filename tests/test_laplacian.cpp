// Laplacian kernels: exactness, convergence, invariance across every kernel and parameter, the
// plan's launch, the backend defaults and validation.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "arch/streams.hpp"
#include "core/deck.hpp"
#include "core/decomposition.hpp"
#include "laplacian/compare.hpp"
#include "laplacian/kernels/blocked.hpp"
#include "laplacian/laplacian.hpp"
#include "laplacian/laplacian_deck.hpp"
#include "laplacian/laplacian_run.hpp"
#include "limits.hpp"

using namespace kstencil;
using Catch::Matchers::ContainsSubstring;

namespace {

// Kernel parameters and the limits they are planned for: the host's, or the host's with gpu set,
// which gives the GPU's policy order (mapping) and tile checks on the host.
struct Config {
  LaplacianKernelParams params;
  bool gpu_mapping = false;
};

ExecLimits limits_with_mapping(bool gpu_mapping) {
  ExecLimits limits = default_exec_limits();
  limits.gpu = gpu_mapping;
  return limits;
}

template <class L>
std::string describe(const Config& c) {
  const LaplacianKernelParams& p = c.params;
  return to_string(p.kernel) + " layout " + to_string(layout_of<L>()) + " " +
         resolve_mapping(layout_of<L>(), p.iterate, c.gpu_mapping).describe() +
         (c.gpu_mapping ? " (GPU mapping)" : "") + " tile " + format_triple(p.tile) + " m " +
         std::to_string(p.m) + " m_slow " + std::to_string(p.m_slow) + " m_contiguous " +
         std::to_string(p.m_contiguous) + " blocks " + std::to_string(p.blocks_per_item) +
         " parts " + std::to_string(p.parts) + " bounds " + std::to_string(p.launch_bounds) +
         (p.streaming_stores ? "" : " plain stores") +
         (p.zero_row_ends ? "" : " row ends untouched");
}

// The plan of `config` for fields of T in layout L on `grid`; it must have no problem.
template <class T, class L>
LaplacianPlan plan_for(const Config& config, const Grid& grid) {
  const LaplacianPlan plan = plan_laplacian(config.params, layout_of<L>(), sizeof(T), grid,
                                            limits_with_mapping(config.gpu_mapping));
  INFO(describe<L>(config) << " on " << format_triple(grid.points) << ": "
                           << plan.problem.value_or("no problem"));
  REQUIRE_FALSE(plan.problem.has_value());
  return plan;
}

template <class T, class L>
std::vector<T> laplacian_of(TestField kind, const Config& config, const Grid& grid) {
  const LaplacianPlan plan = plan_for<T, L>(config, grid);
  auto u = allocate_field<T, L>("u", grid);
  auto f = allocate_field<T, L>("f", grid);
  fill_test_field(TestFieldSpec::of(kind, grid), grid, u);
  apply_laplacian<T, L>(plan, u, f);
  return to_host_x_fastest(f, grid, grid.global());
}

template <class T, class L>
LaplacianVerification verify(const Config& config, const Grid& grid, TestField field) {
  return verify_laplacian<T, L>(plan_for<T, L>(config, grid), grid, field);
}

template <class L>
std::vector<Config> all_configs(bool gpu_mapping) {
  std::vector<Config> configs;
  const int contiguous = AxisRoles::of(layout_of<L>()).contiguous;
  const std::array<std::int64_t, 3> tiles[] = {{0, 0, 0}, {4, 4, 4}, {1, 3, 7}, {8, 1, 2}};
  // Line takes no order, parts or launch bound; its tile counts work items (blocks of m_slow
  // planes, blocks of m rows), its contiguous entry 0 (each work item covers whole lines).
  for (auto tile : tiles)
    for (int m : {1, 2, 16})
      for (int planes : {1, 4})
        for (bool streaming : {false, true}) {
          Config c{{}, gpu_mapping};
          c.params.kernel = LaplacianKernel::line;
          tile[contiguous] = 0;
          c.params.tile = tile;
          c.params.m = m;
          c.params.m_slow = planes;
          c.params.streaming_stores = streaming;
          configs.push_back(c);
        }
  for (IterOrder order : {IterOrder::left, IterOrder::right, IterOrder::automatic})
    for (auto kernel : {LaplacianKernel::mdrange, LaplacianKernel::blocked})
      for (const auto& tile : tiles)
        for (int m : {1, 2, 8, 16})
          for (int m_slow : {1, 2, 4})
            for (int parts : {1, 3})
              for (int bound : {0, 128}) {
                const bool blocked = kernel == LaplacianKernel::blocked;
                if (!blocked && (m != 1 || m_slow != 1 || parts != 1)) continue;
                if (m * m_slow > max_block_points) continue;  // refused: see the test below
                Config c{{}, gpu_mapping};
                c.params.kernel = kernel;
                c.params.iterate = order;
                c.params.tile = tile;
                c.params.m = m;
                c.params.m_slow = m_slow;
                c.params.parts = parts;
                c.params.launch_bounds = bound;
                c.params.streaming_stores =
                    bound != 0;  // both store kinds for every m, tile, parts
                // 1 to 4 consecutive blocks per work item across parts and bounds: with the
                // grids' 13-21 points along the slowest axis, the last item's blocks run past
                // the end (m_slow 4 x 4 blocks) or stop inside it. The last part of the grids' 16
                // or 21 points along y holds fewer blocks than the others for several m.
                if (blocked) c.params.blocks_per_item = 1 + 2 * (parts == 3) + (bound != 0);
                c.params.zero_row_ends = m_slow == 1;  // each m with and without
                configs.push_back(c);
              }
  return configs;
}

template <class T, class L>
void check_exact_quadratic(const Real3& spacing) {
  const Grid grid = Grid::whole({21, 18, 13}, {0.5, -1.0, 2.0}, spacing);
  for (bool gpu_mapping : {false, true})
    for (const auto& config : all_configs<L>(gpu_mapping)) {
      const auto f = laplacian_of<T, L>(TestField::quadratic, config, grid);
      const Box interior = grid.interior();
      std::size_t wrong = 0, n = 0;
      for (Index k = 0; k < grid.points[2]; ++k)
        for (Index j = 0; j < grid.points[1]; ++j)
          for (Index i = 0; i < grid.points[0]; ++i, ++n)
            if (interior.contains({i, j, k})) wrong += f[n] != T(quadratic_laplacian);
      INFO(describe<L>(config));
      REQUIRE(wrong == 0);
    }
}

// The backend's default parameters (a request that leaves every choice open) and their plan.
LaplacianKernelParams default_params(const ExecLimits& limits, Layout layout, const Grid& grid,
                                     int element_bytes) {
  return resolve_laplacian_params(LaplacianKernelRequest{}, limits, layout, grid, element_bytes);
}

template <class T>
LaplacianVerification verify_in(Layout layout, const LaplacianPlan& plan, const Grid& grid) {
  return layout == Layout::right
             ? verify_laplacian<T, Kokkos::LayoutRight>(plan, grid, TestField::sine)
             : verify_laplacian<T, Kokkos::LayoutLeft>(plan, grid, TestField::sine);
}

}  // namespace

TEST_CASE("quadratic field: discrete Laplacian is exactly 12 at every interior point (double)",
          "[laplacian]") {
  // Power-of-two spacings keep every value an exact small binary fraction: no rounding at all.
  check_exact_quadratic<double, Kokkos::LayoutLeft>({1.0, 1.0, 1.0});
  check_exact_quadratic<double, Kokkos::LayoutRight>({0.5, 0.25, 2.0});
}

TEST_CASE("quadratic field: discrete Laplacian is exactly 12 at every interior point (float)",
          "[laplacian]") {
  check_exact_quadratic<float, Kokkos::LayoutLeft>({0.5, 1.0, 1.0});
  check_exact_quadratic<float, Kokkos::LayoutRight>({1.0, 1.0, 0.5});
}

TEMPLATE_TEST_CASE("the sine fill equals test_field_value bitwise on every rank's allocated box",
                   "[laplacian]", float, double) {
  using T = TestType;
  const Grid whole = Grid::whole({19, 23, 17}, {0, 0, 0}, {0.1, 0.2, 0.3});
  const auto spec = TestFieldSpec::of(TestField::sine, whole);
  const auto check = [&](auto layout) {
    using L = decltype(layout);
    for (const Dims3& coords : {Dims3{0, 0, 0}, Dims3{1, 0, 1}, Dims3{0, 1, 0}}) {
      const Grid part = part_of(whole, {2, 2, 2}, coords);
      auto u = allocate_field<T, L>("u", part);
      fill_test_field(spec, part, u);
      const auto values = to_host_x_fastest(u, part, part.allocated);
      std::size_t idx = 0, wrong = 0;
      for (Index k = part.allocated.lo[2]; k < part.allocated.hi[2]; ++k)
        for (Index j = part.allocated.lo[1]; j < part.allocated.hi[1]; ++j)
          for (Index i = part.allocated.lo[0]; i < part.allocated.hi[0]; ++i, ++idx)
            wrong += !(values[idx] == static_cast<T>(test_field_value(spec, i, j, k)));
      INFO("part " << coords[0] << " " << coords[1] << " " << coords[2]
                   << (std::is_same<L, Kokkos::LayoutRight>::value ? ", layout right"
                                                                   : ", layout left"));
      CHECK(idx == static_cast<std::size_t>(part.allocated.size()));
      CHECK(wrong == 0);
    }
  };
  check(Kokkos::LayoutRight{});
  check(Kokkos::LayoutLeft{});
}

TEST_CASE("sine field: error against the analytic Laplacian falls 4x per halving of h",
          "[laplacian]") {
  std::vector<double> errors;
  for (Index n : {17, 33, 65}) {
    const double h = 1.0 / static_cast<double>(n - 1);
    const Grid grid = Grid::whole({n, n, n}, {0, 0, 0}, {h, h, h});
    const Config config{};
    const auto f = laplacian_of<double, Kokkos::LayoutRight>(TestField::sine, config, grid);
    const auto spec = TestFieldSpec::of(TestField::sine, grid);
    double max_error = 0;
    std::size_t idx = 0;
    for (Index k = 0; k < n; ++k)
      for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < n; ++i, ++idx)
          if (grid.interior().contains({i, j, k}))
            max_error = std::max(max_error, std::abs(f[idx] - analytic_laplacian(spec, i, j, k)));
    errors.push_back(max_error);
  }
  // Truncation error h^2/12 u'''' per axis: the ratio tends to 4 from rounding-free coarse grids.
  for (std::size_t r = 1; r < errors.size(); ++r) {
    const double ratio = errors[r - 1] / errors[r];
    INFO("errors " << errors[r - 1] << " -> " << errors[r]);
    CHECK(ratio > 3.9);
    CHECK(ratio < 4.1);
  }
}

TEMPLATE_TEST_CASE(
    "every layout, iteration order, tile, kernel, m, parts and launch bound gives the bitwise "
    "same result",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  const Grid grid = Grid::whole({19, 23, 17}, {0, 0, 0}, {0.1, 0.2, 0.3});
  const Config reference_config{};
  const auto reference = laplacian_of<double, TestType>(TestField::sine, reference_config, grid);
  const auto other_layout =
      std::is_same<TestType, Kokkos::LayoutLeft>::value
          ? laplacian_of<double, Kokkos::LayoutRight>(TestField::sine, reference_config, grid)
          : laplacian_of<double, Kokkos::LayoutLeft>(TestField::sine, reference_config, grid);
  REQUIRE(reference == other_layout);
  std::size_t checked = 0;
  for (bool gpu_mapping : {false, true})
    for (const auto& config : all_configs<TestType>(gpu_mapping)) {
      INFO(describe<TestType>(config));
      REQUIRE(laplacian_of<double, TestType>(TestField::sine, config, grid) == reference);
      ++checked;
    }
  CHECK(checked > 100);
}

TEST_CASE(
    "verification passes, is bitwise against the host reference and leaves non-updated "
    "points untouched",
    "[laplacian]") {
  const Grid grid = Grid::whole({30, 20, 10}, {0, 0, 0}, {0.01, 0.02, 0.03});
  Config config;
  config.params.kernel = LaplacianKernel::blocked;
  config.params.m = 4;
  config.params.parts = 3;
  for (TestField field : {TestField::sine, TestField::quadratic}) {
    const auto v = verify<float, Kokkos::LayoutRight>(config, grid, field);
    CHECK(v.passed);
    CHECK(v.reference_mismatches == 0);
    CHECK(v.untouched_violations == 0);
    CHECK(v.quadratic_max_error <= v.quadratic_tolerance);
  }
}

TEMPLATE_TEST_CASE(
    "blocked stores exactly 0 at the two ends of each updated row and touches nothing else "
    "outside the update range, or with zero_row_ends = false nothing at all",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // 21 x 18 x 13: rows of 19 or 11 updated points, so the row-end work items share warps with
  // updated ones and with idle ones past the end.
  const Grid grid = Grid::whole({21, 18, 13}, {0, 0, 0}, {0.5, 0.25, 2.0});
  const int contiguous = AxisRoles::of(layout_of<TestType>()).contiguous;
  std::size_t checked = 0;
  for (bool gpu_mapping : {false, true})
    for (auto config : all_configs<TestType>(gpu_mapping)) {
      if (config.params.kernel != LaplacianKernel::blocked) continue;
      for (bool zero : {false, true}) {
        config.params.zero_row_ends = zero;
        INFO(describe<TestType>(config));
        const LaplacianPlan plan = plan_for<double, TestType>(config, grid);
        CHECK(plan.zeroed_row_end_axis() == (zero ? contiguous : -1));
        const auto v = verify_laplacian<double, TestType>(plan, grid, TestField::sine);
        CHECK(v.untouched_violations == 0);
        CHECK(v.passed);
        ++checked;
      }
    }
  CHECK(checked > 100);
}

TEST_CASE("row ends lie beside updated rows only: none where a rank's box holds no point",
          "[laplacian]") {
  using laplacian_detail::row_end;
  const Box rows{{1, 1, 1}, {3, 3, 4}};
  CHECK(row_end(rows, 2, {1, 2, 0}));
  CHECK(row_end(rows, 2, {2, 1, 4}));
  CHECK_FALSE(row_end(rows, 2, {2, 1, 2}));
  CHECK_FALSE(row_end(rows, 2, {0, 1, 0}));
  CHECK_FALSE(row_end(rows, -1, {1, 2, 0}));
  // A rank holding one point along the rows' axis, a boundary point: no rows, so no ends.
  const Box none{{1, 1, 2}, {3, 3, 2}};
  CHECK_FALSE(row_end(none, 2, {1, 1, 1}));
  CHECK_FALSE(row_end(none, 2, {1, 1, 2}));
}

TEMPLATE_TEST_CASE(
    "blocked in runs along the contiguous axis (pairs, float quads): bitwise as one point per "
    "work item, row ends and untouched points as there, for rows of every phase and every block "
    "compiled",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // Allocated rows of 4 to 132 points (multiples of the run), updated rows of 2 to 130: rows that
  // start and end inside a run or with it, whose row ends share a run with an updated point
  // (c_begin - 1 = 0 with 1) or sit alone in theirs (c_end), and rows longer than a 32-run warp's
  // 64 or 128 points. verify_laplacian checks against the host reference bitwise, the row ends
  // exactly 0 and every other point outside the box untouched.
  const bool right = std::is_same<TestType, Kokkos::LayoutRight>::value;
  struct Block {
    int m, m_slow;
  };
  struct RunCase {
    int points;
    std::vector<Index> lengths;
  };
  std::size_t checked = 0;
  for (const RunCase& run : {RunCase{2, {4, 6, 18, 34, 70}}, RunCase{4, {4, 8, 20, 36, 132}}})
    for (Index length : run.lengths)
      for (Block b : {Block{4, 1}, Block{2, 2}, Block{1, 4}, Block{8, 1}, Block{4, 2}, Block{2, 4}})
        // Quads are compiled for 4 x 2 only.
        for (bool gpu_mapping : {false, true})
          for (bool zero_ends : {false, true}) {
            if (run.points == 4 && (b.m != 4 || b.m_slow != 2)) continue;
            const Index3 points = right ? Index3{13, 11, length} : Index3{length, 11, 13};
            const Grid grid = Grid::whole(points, {0, 0, 0}, {0.1, 0.2, 0.3});
            Config single{{}, gpu_mapping};
            single.params.kernel = LaplacianKernel::blocked;
            single.params.m = b.m;
            single.params.m_slow = b.m_slow;
            single.params.blocks_per_item = 1 + (b.m == 4) + 2 * (b.m_slow == 4);
            single.params.parts = zero_ends ? 1 : 2;
            single.params.launch_bounds = 128;
            single.params.tile = gpu_mapping ? std::array<std::int64_t, 3>{0, 0, 0}
                                             : std::array<std::int64_t, 3>{2, 3, 2};
            single.params.zero_row_ends = zero_ends;
            Config runs = single;
            runs.params.m_contiguous = run.points;
            const auto check = [&](auto zero) {
              using T = decltype(zero);
              INFO("grid " << format_triple(points) << " " << describe<TestType>(runs) << " "
                           << sizeof(T) << "-byte values");
              const LaplacianPlan plan = plan_for<T, TestType>(runs, grid);
              const int contiguous = AxisRoles::of(layout_of<TestType>()).contiguous;
              CHECK(plan.points_per_group()[contiguous] ==
                    run.points * to_axis_order(plan.mapping, plan.launch->tile)[contiguous]);
              REQUIRE(laplacian_of<T, TestType>(TestField::sine, runs, grid) ==
                      laplacian_of<T, TestType>(TestField::sine, single, grid));
              const auto v = verify_laplacian<T, TestType>(plan, grid, TestField::sine);
              CHECK(v.passed);
              CHECK(v.reference_mismatches == 0);
              CHECK(v.untouched_violations == 0);
              ++checked;
            };
            check(0.0f);
            if (run.points == 2) check(0.0);
          }
  CHECK(checked == 260);
}

TEST_CASE("runs are refused where they are not compiled or a row could not hold them",
          "[laplacian]") {
  const ExecLimits limits = default_exec_limits();
  LaplacianKernelParams params;
  params.kernel = LaplacianKernel::blocked;
  params.m = 8;
  params.m_contiguous = 2;
  const Grid even = Grid::whole({12, 10, 8}, {0, 0, 0}, {1, 1, 1});
  CHECK_FALSE(plan_laplacian(params, Layout::right, 4, even, limits).problem);
  const auto refused = [&](const LaplacianPlan& plan, const char* why) {
    REQUIRE(plan.problem);
    CHECK_THAT(*plan.problem, ContainsSubstring(why));
    CHECK(plan.problem_key == "m_contiguous");
    CHECK_FALSE(plan.launch.has_value());
  };
  // Odd allocated extent along the contiguous axis: z in layout right, x in layout left.
  const Grid odd_z = Grid::whole({12, 10, 9}, {0, 0, 0}, {1, 1, 1});
  refused(plan_laplacian(params, Layout::right, 4, odd_z, limits), "a multiple of 2 points");
  CHECK_FALSE(plan_laplacian(params, Layout::left, 4, odd_z, limits).problem);
  refused(plan_laplacian(params, Layout::left, 4, Grid::whole({9, 10, 8}, {0, 0, 0}, {1, 1, 1}),
                         limits),
          "a multiple of 2 points");
  CHECK_FALSE(plan_laplacian(params, Layout::right, 8, even, limits).problem);
  // Quads: float only, 4 x 2 only, and rows of a multiple of 4 points (12 along x holds them, 10
  // along y never counts, 8 along z does).
  params.m_contiguous = 4;
  refused(plan_laplacian(params, Layout::right, 4, even, limits), "quads (4) for 4 x 2 in float");
  params.m = 4;
  params.m_slow = 2;
  CHECK_FALSE(plan_laplacian(params, Layout::right, 4, even, limits).problem);
  CHECK_FALSE(plan_laplacian(params, Layout::left, 4, even, limits).problem);
  refused(plan_laplacian(params, Layout::right, 8, even, limits), "quads (4) for 4 x 2 in float");
  refused(plan_laplacian(params, Layout::left, 4, Grid::whole({14, 10, 8}, {0, 0, 0}, {1, 1, 1}),
                         limits),
          "a multiple of 4 points");
  params.m_contiguous = 3;
  refused(plan_laplacian(params, Layout::right, 4, even, limits), "must be 1, 2 or 4");
  params.m_contiguous = 2;
  params.m = 8;
  params.m_slow = 1;
  params.streaming_stores = false;
  refused(plan_laplacian(params, Layout::right, 4, even, limits), "streaming stores");
  params.streaming_stores = true;
  params.m = 16;
  refused(plan_laplacian(params, Layout::right, 4, even, limits), "m x m_slow = 4 or 8");
  params.m = 8;
  params.kernel = LaplacianKernel::line;
  refused(plan_laplacian(params, Layout::right, 4, even, limits), "one point per work item");

  const Deck deck = Deck::parse("", "lap.toml",
                                {"kernel.variant=\"blocked\"", "kernel.m_contiguous=2",
                                 "kernel.m=16", "run.precision=\"double\""},
                                laplacian_schema());
  CHECK_THROWS_WITH(laplacian_setup_from_deck(deck, limits),
                    ContainsSubstring("lap.toml: [kernel] m_contiguous = 2") &&
                        ContainsSubstring("m x m_slow = 4 or 8"));
}

TEMPLATE_TEST_CASE(
    "line kernels with streaming stores: rows of every length and alignment bitwise equal to "
    "plain stores, nothing written outside the update range but the zeroed row ends",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // Rows of 1 to 69 updated points, so that rows start at every offset within a cache line and
  // hold no, one or several whole lines in double (8 per line) and float (16) besides the partial
  // lines at their ends; verify_laplacian fills f with NaN and counts any point outside the update
  // box that is no longer NaN. 9 planes in work items of 1, 2 and 4 (the last item holds the one
  // plane left over); rows of 16, 32 and 64 points make the planes 9 x 16 x 8 bytes (and x 4 for
  // 32 and 64) apart, whole cache lines, the other lengths put each plane's lines at another
  // offset, which the AVX2 and AVX-512 rows realign. With zero_row_ends the points either side of
  // each row must hold 0 (verify_laplacian checks them exactly), and on AVX2 and AVX-512 hosts an
  // item's rows with those ends between them run as one span.
  INFO("non-temporal host stores compiled: " << host_streaming_stores_compiled());
  INFO("AVX2 or AVX-512 host lines compiled: " << host_simd_lines_compiled());
  std::size_t checked = 0;
  for (Index length : {3, 4, 10, 16, 18, 19, 26, 32, 37, 64, 71})
    for (int m : {1, 4, 16})
      for (int planes : {1, 2, 4})
        for (bool zero_ends : {false, true}) {
          const bool right = std::is_same<TestType, Kokkos::LayoutRight>::value;
          const Index3 points = right ? Index3{11, 9, length} : Index3{length, 9, 11};
          const Grid grid = Grid::whole(points, {0, 0, 0}, {0.1, 0.2, 0.3});
          Config plain;
          plain.params.kernel = LaplacianKernel::line;
          plain.params.m = m;
          plain.params.m_slow = planes;
          plain.params.streaming_stores = false;
          plain.params.zero_row_ends = zero_ends;
          Config streaming = plain;
          streaming.params.streaming_stores = true;
          // Rows with and without their prefetches (kernel.prefetch, into each cache) at every
          // length.
          if (m != 4 && line_prefetches(streaming.params, false)) {
            constexpr PrefetchInto caches[] = {PrefetchInto::l1, PrefetchInto::l2,
                                               PrefetchInto::both};
            streaming.params.prefetch = {m == 1 ? 256 : default_prefetch_bytes,
                                         caches[(planes + (zero_ends ? 1 : 0)) % 3]};
          }
          INFO("grid " << format_triple(points) << " m " << m << " m_slow " << planes
                       << " zero_row_ends " << zero_ends << ", "
                       << prefetch_words(streaming.params.prefetch));
          REQUIRE(laplacian_of<double, TestType>(TestField::sine, streaming, grid) ==
                  laplacian_of<double, TestType>(TestField::sine, plain, grid));
          REQUIRE(laplacian_of<float, TestType>(TestField::sine, streaming, grid) ==
                  laplacian_of<float, TestType>(TestField::sine, plain, grid));
          const auto v = verify<double, TestType>(streaming, grid, TestField::sine);
          CHECK(v.passed);
          CHECK(v.untouched_violations == 0);
          const auto vf = verify<float, TestType>(streaming, grid, TestField::sine);
          CHECK(vf.passed);
          CHECK(vf.untouched_violations == 0);
          ++checked;
        }
  CHECK(checked == 198);
}

TEST_CASE(
    "blocked's y parts and register blocks cover the y range exactly once, all parts in one "
    "launch",
    "[laplacian]") {
  // Layout right with the identity policy order: policy dimension 0 is the slowest axis (x).
  const Grid grid = Grid::whole({8, 50, 9}, {0, 0, 0}, {1, 1, 1});
  ExecLimits host = default_exec_limits();
  host.gpu = false;
  for (int parts : {1, 2, 3, 7, 48})
    for (int m : {1, 2, 4, 8, 16}) {
      LaplacianKernelParams params;
      params.kernel = LaplacianKernel::blocked;
      params.parts = parts;
      params.m = m;
      params.iterate = IterOrder::right;
      const LaplacianPlan plan = plan_laplacian(params, Layout::right, 8, grid, host);
      INFO("parts " << parts << " m " << m);
      REQUIRE_FALSE(plan.problem.has_value());
      REQUIRE(plan.mapping == Mapping{false, true});
      REQUIRE(plan.launch.has_value());
      const LaplacianLaunch& launch = *plan.launch;
      CHECK(launch.rank == 3);
      CHECK(launch.j_begin == 1);
      CHECK(launch.j_end == 49);
      // 6 updated planes along x, one 1-plane block per work item.
      CHECK(launch.slow_items_per_part == 6);
      CHECK(launch.lower[0] == 0);
      CHECK(launch.lower[1] == 0);
      CHECK(launch.upper[1] == launch.y_blocks_per_part);
      // The contiguous range starts aligned and covers the zeroed row ends.
      CHECK(launch.lower[2] % column_alignment == 0);
      CHECK(launch.lower[2] <= launch.c_begin - 1);
      CHECK(launch.upper[2] == launch.c_end + 1);
      // The y points ColumnStencil updates from the first work item along x of each part.
      std::vector<int> covered(50, 0);
      REQUIRE(launch.upper[0] % launch.slow_items_per_part == 0);
      for (Index item = launch.lower[0]; item < launch.upper[0]; item += launch.slow_items_per_part)
        for (Index block = launch.lower[1]; block < launch.upper[1]; ++block) {
          const Index part = item / launch.slow_items_per_part;
          const Index j0 = launch.j_begin + (part * launch.y_blocks_per_part + block) * m;
          for (Index j = j0; j < std::min(j0 + m, launch.j_end); ++j) ++covered[j];
        }
      for (Index j = 0; j < 50; ++j) {
        INFO("j " << j);
        CHECK(covered[j] == (j >= 1 && j < 49 ? 1 : 0));
      }
      // Parts of whole blocks: 48 updated rows in parts of ceil(48 / parts) rounded up to m, all
      // in the one launch (m = 1 too: blocked always runs the register-block body).
      const Index chunk = ((48 + parts - 1) / parts + m - 1) / m * m;
      const Index part_count = (48 + chunk - 1) / chunk;
      CHECK(launch.y_blocks_per_part == chunk / m);
      CHECK(launch.upper[0] == launch.slow_items_per_part * part_count);
      // And the kernel itself updates every point once, bitwise as the reference.
      const auto v = verify_laplacian<double, Kokkos::LayoutRight>(plan, grid, TestField::sine);
      CHECK(v.passed);
      CHECK(v.reference_mismatches == 0);
      CHECK(v.untouched_violations == 0);
    }
}

TEST_CASE("Divisor's multiply and shift equal integer division", "[laplacian]") {
  using laplacian_kernels::Divisor;
  // Every quotient for small divisors, then divisors and dividends at the ends of the range
  // (2^31 - 1 is the largest index a kernel sees), where the multiplier needs its 33rd bit.
  std::size_t wrong = 0;
  for (int d = 1; d <= 300; ++d) {
    const Divisor by(d);
    for (int x = 0; x < 20000; ++x) wrong += by.divide(x) != x / d;
  }
  const int max = std::numeric_limits<int>::max();
  for (Index d :
       {Index(3), Index(7), Index(641), Index(65535), Index(65537), Index(1) << 20,
        (Index(1) << 20) + 1, Index(max / 3), Index(max - 1), Index(max), Index(1) << 31}) {
    const Divisor by(d);
    for (Index x :
         {Index(0), d - 1, d, d + 1, 2 * d - 1, 2 * d, Index(max / 2), Index(max - 1), Index(max)})
      if (x >= 0 && x <= max) {
        INFO("d " << d << " x " << x);
        CHECK(by.divide(static_cast<int>(x)) == x / d);
      }
    for (Index q = 0; q * d <= max; q += std::max<Index>(1, max / d / 1000)) {
      for (Index r : {Index(0), d - 1})
        if (q * d + r <= max) wrong += by.divide(static_cast<int>(q * d + r)) != q;
    }
  }
  CHECK(wrong == 0);
  CHECK_THROWS(Divisor(0));
}

TEST_CASE(
    "auto blocked parts keep the planes a work item reads within a quarter of the "
    "last-level cache",
    "[laplacian]") {
  const Grid grid = Grid::whole({2048, 1024, 256}, {0, 0, 0}, {1, 1, 1});
  const std::int64_t llc = 50 << 20;  // H100 L2
  // LayoutLeft: planes are x-y, 2048 * 1024 * 8 B = 16 MiB; 3 planes / parts <= 12.5 MiB -> 4,
  // the 4 planes of a 4 x 2 block -> 6.
  CHECK(auto_blocked_parts(grid, Layout::left, 8, llc, 8, 3) == 4);
  CHECK(auto_blocked_parts(grid, Layout::left, 8, llc, 4, 4) == 6);
  // 1024^3: 8 MiB planes -> 2 parts for 3 planes, 3 for 4; 512^3: 2 MiB planes -> 1.
  const Grid cube = Grid::whole({1024, 1024, 1024}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_blocked_parts(cube, Layout::right, 8, llc, 4, 3) == 2);
  CHECK(auto_blocked_parts(cube, Layout::right, 8, llc, 4, 4) == 3);
  const Grid cube512 = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_blocked_parts(cube512, Layout::left, 8, llc, 4, 4) == 1);
  // LayoutRight: planes are z-y, 256 * 1024 * 8 B = 2 MiB: one part.
  CHECK(auto_blocked_parts(grid, Layout::right, 8, llc, 4, 4) == 1);
  CHECK(auto_blocked_parts(grid, Layout::left, 8, 0, 4, 4) == 1);
  // Six planes: 6 x 8 MiB / 12.5 MiB -> 4 parts at 1024^3.
  CHECK(auto_blocked_parts(cube, Layout::right, 8, llc, 4, 6) == 4);
}

TEST_CASE("register blocks of more than max_block_points points are refused", "[laplacian]") {
  const Grid grid = Grid::whole({20, 20, 20}, {0, 0, 0}, {1, 1, 1});
  const ExecLimits limits = default_exec_limits();
  LaplacianKernelParams params;
  params.kernel = LaplacianKernel::blocked;
  params.m = 8;
  params.m_slow = 4;
  const auto plan = [&] { return plan_laplacian(params, Layout::right, 8, grid, limits); };
  REQUIRE(plan().problem);
  CHECK_THAT(*plan().problem, ContainsSubstring("m x m_slow must be at most 16"));
  CHECK(plan().problem_key == "m_slow");
  CHECK_FALSE(plan().launch.has_value());
  // A plan with a problem is refused at launch.
  const auto u = allocate_field<double, Kokkos::LayoutRight>("u", grid);
  const auto f = allocate_field<double, Kokkos::LayoutRight>("f", grid);
  CHECK_THROWS_AS((apply_laplacian<double, Kokkos::LayoutRight>(plan(), u, f)),
                  std::invalid_argument);
  params.m_slow = 2;
  CHECK_FALSE(plan().problem);
  // Line has no register blocks: 8 rows of 4 planes per work item are fine.
  params.kernel = LaplacianKernel::line;
  params.m_slow = 4;
  CHECK_FALSE(plan().problem);

  const Deck deck =
      Deck::parse("", "lap.toml", {"kernel.variant=\"blocked\"", "kernel.m=16", "kernel.m_slow=2"},
                  laplacian_schema());
  CHECK_THROWS_AS(laplacian_setup_from_deck(deck, limits), DeckError);
  CHECK_THROWS_WITH(laplacian_setup_from_deck(deck, limits),
                    ContainsSubstring("lap.toml: [kernel] m_slow = 2") &&
                        ContainsSubstring("blocked: m x m_slow must be at most 16"));
}

TEST_CASE("a plan refuses to launch fields of another layout or precision", "[laplacian]") {
  const Grid grid = Grid::whole({12, 10, 8}, {0, 0, 0}, {1, 1, 1});
  LaplacianKernelParams params;
  params.kernel = LaplacianKernel::blocked;
  params.m = 4;
  const LaplacianPlan plan = plan_laplacian(params, Layout::left, 8, grid, default_exec_limits());
  REQUIRE_FALSE(plan.problem);
  const auto u = allocate_field<double, Kokkos::LayoutRight>("u", grid);
  const auto f = allocate_field<double, Kokkos::LayoutRight>("f", grid);
  CHECK_THROWS_AS((apply_laplacian<double, Kokkos::LayoutRight>(plan, u, f)),
                  std::invalid_argument);
  const auto uf = allocate_field<float, Kokkos::LayoutLeft>("u", grid);
  const auto ff = allocate_field<float, Kokkos::LayoutLeft>("f", grid);
  CHECK_THROWS_AS((apply_laplacian<float, Kokkos::LayoutLeft>(plan, uf, ff)),
                  std::invalid_argument);
  const auto ul = allocate_field<double, Kokkos::LayoutLeft>("u", grid);
  const auto fl = allocate_field<double, Kokkos::LayoutLeft>("f", grid);
  CHECK_NOTHROW((apply_laplacian<double, Kokkos::LayoutLeft>(plan, ul, fl)));
}

TEST_CASE(
    "each kernel refuses the parameters it cannot use, naming the key; line's tile counts work "
    "items and leaves the contiguous axis whole",
    "[laplacian]") {
  const Grid grid = Grid::whole({20, 20, 20}, {0, 0, 0}, {1, 1, 1});
  const ExecLimits limits = default_exec_limits();
  struct Case {
    LaplacianKernel kernel;
    void (*set)(LaplacianKernelParams&);
    const char* key;
    const char* text;
  };
  const Case cases[] = {
      {LaplacianKernel::mdrange, [](LaplacianKernelParams& p) { p.m = 4; }, "m",
       "mdrange updates one point per work item"},
      {LaplacianKernel::mdrange, [](LaplacianKernelParams& p) { p.m_slow = 2; }, "m_slow",
       "mdrange updates one point per work item"},
      {LaplacianKernel::mdrange, [](LaplacianKernelParams& p) { p.blocks_per_item = 2; },
       "blocks_per_item", "mdrange has no register blocks"},
      {LaplacianKernel::mdrange, [](LaplacianKernelParams& p) { p.parts = 2; }, "parts",
       "mdrange runs y in one part"},
      {LaplacianKernel::line, [](LaplacianKernelParams& p) { p.blocks_per_item = 3; },
       "blocks_per_item", "line has no register blocks"},
      {LaplacianKernel::line, [](LaplacianKernelParams& p) { p.parts = 3; }, "parts",
       "line runs y in one part"},
      {LaplacianKernel::line, [](LaplacianKernelParams& p) { p.launch_bounds = 128; },
       "launch_bounds", "line has no launch bounds"},
      {LaplacianKernel::line, [](LaplacianKernelParams& p) { p.iterate = IterOrder::left; },
       "iterate", "line sweeps lines in its own order"},
      {LaplacianKernel::line,
       [](LaplacianKernelParams& p) {
         p.tile = {0, 0, 2};
       },
       "tile", "whole lines"},
      {LaplacianKernel::blocked, [](LaplacianKernelParams& p) { p.m = 3; }, "m",
       "m must be 1, 2, 4, 8 or 16"},
      {LaplacianKernel::blocked, [](LaplacianKernelParams& p) { p.prefetch.bytes = 2048; },
       "prefetch", "only line with streaming stores prefetches"},
      {LaplacianKernel::line,
       [](LaplacianKernelParams& p) {
         p.streaming_stores = false;
         p.prefetch.bytes = 512;
       },
       "prefetch", "only line with streaming stores prefetches"},
      {LaplacianKernel::blocked, [](LaplacianKernelParams& p) { p.parts = 0; }, "parts",
       "at least 1"},
  };
  for (const Case& c : cases) {
    LaplacianKernelParams params;
    params.kernel = c.kernel;
    c.set(params);
    const LaplacianPlan plan = plan_laplacian(params, Layout::right, 8, grid, limits);
    INFO(to_string(c.kernel) << " " << c.key);
    REQUIRE(plan.problem);
    CHECK_THAT(*plan.problem, ContainsSubstring(c.text));
    CHECK(plan.problem_key == c.key);
  }
  // Line: a contiguous tile entry of 0 or 1; the others count blocks of m_slow planes and of m
  // rows (18 updated planes in blocks of 4: 5 work items; 18 rows in blocks of 4: 5).
  LaplacianKernelParams line;
  line.kernel = LaplacianKernel::line;
  line.m = 4;
  line.m_slow = 4;
  line.tile = {2, 3, 1};
  const LaplacianPlan plan = plan_laplacian(line, Layout::right, 8, grid, limits);
  REQUIRE_FALSE(plan.problem);
  REQUIRE(plan.launch);
  CHECK(plan.launch->rank == 2);
  CHECK(plan.launch->upper == Index3{5, 5, 1});
  CHECK(plan.launch->tile == std::array<std::int64_t, 3>{2, 3, 1});
  // 2 work items of 4 planes, 3 of 4 rows, whole rows of 18 points.
  CHECK(plan.points_per_group() == std::array<std::int64_t, 3>{8, 12, 18});
  line.tile = {1, 1, 1};  // layout left: x is the contiguous axis
  const LaplacianPlan left = plan_laplacian(line, Layout::left, 4, grid, limits);
  REQUIRE_FALSE(left.problem);
  CHECK(left.points_per_group() == std::array<std::int64_t, 3>{18, 4, 4});
  line.tile = {2, 1, 1};
  CHECK(plan_laplacian(line, Layout::left, 4, grid, limits).problem_key == "tile");
}

TEST_CASE("kernel names: the three kernels, and the retired variant words name the replacement",
          "[laplacian]") {
  for (auto kernel : {LaplacianKernel::mdrange, LaplacianKernel::blocked, LaplacianKernel::line}) {
    CHECK(parse_laplacian_kernel(to_string(kernel)) == kernel);
    CHECK_FALSE(retired_laplacian_variant(to_string(kernel)));
  }
  CHECK(to_string(LaplacianKernel::blocked) == "blocked");
  CHECK_FALSE(parse_laplacian_kernel("auto"));
  CHECK_FALSE(retired_laplacian_variant("auto"));
  for (const char* word : {"register-blocked", "subdomain", "march", "scratch"}) {
    INFO(word);
    CHECK_FALSE(parse_laplacian_kernel(word));
    REQUIRE(retired_laplacian_variant(word));
    CHECK_THAT(*retired_laplacian_variant(word), ContainsSubstring("use \"blocked\""));
  }
  CHECK_THAT(*retired_laplacian_variant("register-blocked"), ContainsSubstring("renamed"));
  CHECK_THAT(*retired_laplacian_variant("subdomain"), ContainsSubstring("renamed"));
  CHECK_THAT(*retired_laplacian_variant("march"), ContainsSubstring("retired"));
  CHECK_THAT(*retired_laplacian_variant("scratch"), ContainsSubstring("retired"));
}

TEST_CASE(
    "variant auto honours the kernel keys the deck sets; keys a kernel cannot use are refused "
    "naming the key",
    "[laplacian]") {
  ExecLimits host;
  host.backend = "OpenMP";
  const ExecLimits gpu = h100_limits();
  const auto setup = [&](const std::vector<std::string>& overrides, const ExecLimits& limits) {
    return laplacian_setup_from_deck(Deck::parse("[grid]\nnx = 16\nny = 16\nnz = 16\n", "lap.toml",
                                                 overrides, laplacian_schema()),
                                     limits);
  };
  // Every key "auto": the backend's default kernel and its parameters.
  const auto host_default = setup({}, host);
  CHECK(host_default.requested_variant == "auto");
  CHECK(host_default.plan.params.kernel == LaplacianKernel::line);
  CHECK(host_default.plan.params.m == 16);
  CHECK(host_default.plan.params.streaming_stores);
  // Rows of several planes' streams 2 KiB ahead, the one-plane AVX row a page; nothing to prefetch
  // without AVX, on GPUs or with plain stores.
  CHECK(host_default.plan.params.prefetch.bytes ==
        (host_simd_lines_compiled() ? default_prefetch_bytes
         : host_prefetch_compiled() ? default_single_stream_prefetch_bytes
                                    : 0));
  CHECK(host_default.plan.params.prefetch.into == PrefetchInto::l1);
  CHECK(setup({"kernel.prefetch=0"}, host).plan.params.prefetch.bytes == 0);
  // Whatever the L1 (FDTD's rule is not the Laplacian's).
  ExecLimits small_l1 = host;
  small_l1.core_l1d_bytes = 32 << 10;
  CHECK(setup({}, small_l1).plan.params.prefetch.bytes == host_default.plan.params.prefetch.bytes);
  if (host_prefetch_compiled()) {
    CHECK(setup({"kernel.prefetch=1024"}, host).plan.params.prefetch.bytes == 1024);
    // kernel.prefetch_into picks the cache, the distance stays the kernel's.
    for (const auto& [word, into] :
         {std::pair{"l1", PrefetchInto::l1}, std::pair{"l2", PrefetchInto::l2},
          std::pair{"both", PrefetchInto::both}}) {
      const auto named = setup({std::string("kernel.prefetch_into=") + word}, small_l1);
      CHECK(named.plan.params.prefetch.into == into);
      CHECK(named.plan.params.prefetch.bytes == host_default.plan.params.prefetch.bytes);
    }
    CHECK_THROWS_WITH(setup({"kernel.prefetch=0", "kernel.prefetch_into=l2"}, host),
                      ContainsSubstring("lap.toml: [kernel] prefetch_into = \"l2\"") &&
                          ContainsSubstring("kernel.prefetch = 0 prefetches nothing"));
  }
  // A cache named where nothing prefetches, or one the key does not know, is refused.
  CHECK_THROWS_WITH(setup({"kernel.prefetch_into=l2"}, gpu),
                    ContainsSubstring("[kernel] prefetch_into") &&
                        ContainsSubstring("only line prefetches") &&
                        ContainsSubstring("\"auto\" for blocked"));
  CHECK_THROWS_WITH(setup({"kernel.prefetch_into=l3"}, host),
                    ContainsSubstring("[kernel] prefetch_into = \"l3\"") &&
                        ContainsSubstring("allowed: \"auto\", \"l1\", \"l2\", \"both\""));
  const auto gpu_default = setup({}, gpu);
  CHECK(gpu_default.plan.params.prefetch.bytes == 0);
  CHECK(gpu_default.plan.params.kernel == LaplacianKernel::blocked);
  CHECK(gpu_default.plan.params.m == 4);
  CHECK(gpu_default.plan.params.m_slow == 2);
  CHECK(gpu_default.plan.params.m_contiguous == 2);
  CHECK(gpu_default.plan.params.blocks_per_item == 2);
  CHECK(gpu_default.plan.params.launch_bounds == 128);
  // Explicit keys replace the default kernel's parameters.
  const auto m4 = setup({"kernel.m=4"}, host);
  CHECK(m4.plan.params.kernel == LaplacianKernel::line);
  CHECK(m4.plan.params.m == 4);
  const auto host_keys = setup({"kernel.tile=[4, 1, 0]", "kernel.streaming_stores=false",
                                "kernel.m_slow=2", "kernel.zero_row_ends=false"},
                               host);
  CHECK(host_keys.plan.params.kernel == LaplacianKernel::line);
  CHECK(host_keys.plan.params.tile == std::array<std::int64_t, 3>{4, 1, 0});
  CHECK_FALSE(host_keys.plan.params.streaming_stores);
  CHECK(host_keys.plan.params.m_slow == 2);
  CHECK(host_keys.plan.zeroed_row_end_axis() == -1);
  CHECK(host_keys.plan.params.prefetch.bytes == 0);
  const auto gpu_keys = setup({"kernel.parts=2", "kernel.m=4", "kernel.blocks_per_item=1",
                               "kernel.launch_bounds=256", "kernel.tile=[1, 2, 64]"},
                              gpu);
  CHECK(gpu_keys.plan.params.kernel == LaplacianKernel::blocked);
  CHECK(gpu_keys.plan.params.parts == 2);
  CHECK(gpu_keys.plan.params.m == 4);
  CHECK(gpu_keys.plan.params.m_slow == 2);  // the default's 2 beside an explicit m
  CHECK(gpu_keys.plan.params.blocks_per_item == 1);
  CHECK(gpu_keys.plan.params.launch_bounds == 256);
  CHECK(gpu_keys.plan.params.tile == std::array<std::int64_t, 3>{1, 2, 64});
  // A named kernel uses them too, and "auto" takes that kernel's default.
  const auto line = setup({"kernel.variant=line", "kernel.tile=[4, 1, 0]", "kernel.m=4"}, gpu);
  CHECK(line.requested_variant == "line");
  CHECK(line.plan.params.kernel == LaplacianKernel::line);
  CHECK(line.plan.params.tile == std::array<std::int64_t, 3>{4, 1, 0});
  CHECK(line.plan.params.m == 4);
  const auto mdrange = setup({"kernel.variant=mdrange", "kernel.m=auto", "kernel.m_slow=1"}, host);
  CHECK(mdrange.plan.params.kernel == LaplacianKernel::mdrange);
  CHECK(mdrange.plan.params.m == 1);

  // Keys the chosen kernel cannot use: a DeckError naming the key, its value and the kernel.
  struct Refused {
    std::vector<std::string> overrides;
    const ExecLimits* limits;
    std::string key, text;
  };
  const Refused refused[] = {
      {{"kernel.parts=2"},
       &host,
       "[kernel] parts = 2: not valid for kernel line",
       "line runs y in one part"},
      {{"kernel.variant=mdrange", "kernel.m=4"},
       &host,
       "[kernel] m = 4: not valid for kernel mdrange",
       "mdrange updates one point per work item"},
      {{"kernel.variant=mdrange", "kernel.m_slow=2"},
       &gpu,
       "[kernel] m_slow = 2: not valid for kernel mdrange",
       "mdrange updates one point"},
      {{"kernel.variant=mdrange", "kernel.blocks_per_item=2"},
       &host,
       "[kernel] blocks_per_item = 2: not valid for kernel mdrange",
       "no register blocks"},
      {{"kernel.variant=line", "kernel.launch_bounds=128"},
       &gpu,
       "[kernel] launch_bounds = 128: not valid for kernel line",
       "no launch bounds"},
      {{"kernel.iterate=left"},
       &host,
       "[kernel] iterate = \"left\": not valid for kernel line",
       "its own order"},
      {{"kernel.tile=[0, 0, 4]"}, &host, "[kernel] tile = [0, 0, 4]", "whole lines"},
      {{"kernel.variant=line", "kernel.prefetch=512"},
       &gpu,
       "[kernel] prefetch = 512: not valid for kernel line",
       "only line with streaming stores prefetches"},
      {{"kernel.streaming_stores=false", "kernel.prefetch=2048"},
       &host,
       "[kernel] prefetch = 2048: not valid for kernel line",
       "only line with streaming stores prefetches"},
      {{"kernel.variant=blocked", "kernel.m=8", "kernel.m_slow=4"},
       &gpu,
       "[kernel] m_slow = 4: not valid for kernel blocked",
       "m x m_slow must be at most 16"},
  };
  for (const Refused& r : refused) {
    INFO(r.key);
    CHECK_THROWS_AS(setup(r.overrides, *r.limits), DeckError);
    CHECK_THROWS_WITH(setup(r.overrides, *r.limits),
                      ContainsSubstring("lap.toml: " + r.key) && ContainsSubstring(r.text));
  }
}

TEST_CASE("auto iteration makes the contiguous index fastest on host and GPU", "[mapping]") {
  CHECK(resolve_mapping(Layout::left, IterOrder::automatic, false) == Mapping{false, false});
  CHECK(resolve_mapping(Layout::right, IterOrder::automatic, false) == Mapping{false, true});
  CHECK(resolve_mapping(Layout::left, IterOrder::automatic, true) == Mapping{false, false});
  // On GPUs policy dimension 0 is threadIdx.x: LayoutRight's contiguous k goes first.
  CHECK(resolve_mapping(Layout::right, IterOrder::automatic, true) == Mapping{true, false});
  CHECK(resolve_mapping(Layout::right, IterOrder::left, true) == Mapping{false, false});
  const Mapping reversed{true, false};
  CHECK(to_policy_order(reversed, std::array<std::int64_t, 3>{1, 2, 3}) ==
        std::array<std::int64_t, 3>{3, 2, 1});
}

TEST_CASE("tile validation rejects launches Kokkos would drop or refuse on a GPU", "[mapping]") {
  const ExecLimits gpu = h100_limits();
  const std::array<std::int64_t, 3> big{512, 512, 512};
  using Catch::Matchers::ContainsSubstring;
  CHECK_FALSE(tile_problem({32, 4, 2}, big, gpu, 0));
  CHECK_FALSE(tile_problem({1024, 1, 1}, big, gpu, 0));
  // Kokkos issue #8239: more than 64 threads in block z silently skip work.
  CHECK_THAT(*tile_problem({1, 2, 128}, big, gpu, 0), ContainsSubstring("exceed the limit of 64"));
  CHECK_THAT(*tile_problem({1, 1, 256}, big, gpu, 0), ContainsSubstring("#8239"));
  CHECK_THAT(*tile_problem({64, 32, 1}, big, gpu, 0), ContainsSubstring("2048 threads per block"));
  CHECK_THAT(*tile_problem({32, 8, 1}, big, gpu, 128), ContainsSubstring("kernel.launch_bounds"));
  // Kokkos issue #4192: more than 65535 blocks along y are not launched by Kokkos 3.4.
  CHECK_THAT(*tile_problem({32, 1, 1}, {32, 70000, 4}, gpu, 0), ContainsSubstring("#4192"));
  ExecLimits host;
  host.backend = "OpenMP";
  CHECK_FALSE(tile_problem({1, 1, 4096}, big, host, 0));

  // A plan's launch is checked with Kokkos' defaults filled in (iterate left: the identity policy
  // order, z in policy dimension 2).
  const Grid grid = Grid::whole({64, 64, 64}, {0, 0, 0}, {1, 1, 1});
  LaplacianKernelParams params;
  params.iterate = IterOrder::left;
  params.tile = {0, 0, 128};
  const LaplacianPlan on_gpu = plan_laplacian(params, Layout::right, 8, grid, gpu);
  REQUIRE(on_gpu.problem.has_value());
  CHECK(on_gpu.problem_key == "tile");
  CHECK_THAT(*on_gpu.problem, ContainsSubstring("policy tile [") && ContainsSubstring(", 128]"));
  CHECK_FALSE(plan_laplacian(params, Layout::right, 8, grid, host).problem.has_value());
}

TEST_CASE("the host default: line kernels of 16 rows per work item with streaming stores",
          "[laplacian]") {
  ExecLimits host;
  host.backend = "OpenMP";
  const Grid grid = Grid::whole({384, 384, 384}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::left, Layout::right})
    for (int element_bytes : {4, 8}) {
      const auto params = default_params(host, layout, grid, element_bytes);
      CHECK(params.kernel == LaplacianKernel::line);
      CHECK(params.m == 16);
      CHECK(params.m_slow == (host_simd_lines_compiled() ? 4 : 1));
      CHECK(params.streaming_stores);
      CHECK(params.zero_row_ends);
      CHECK(params.tile == std::array<std::int64_t, 3>{0, 0, 0});
      CHECK(params.parts == 1);
      CHECK(params.blocks_per_item == 1);
      CHECK(params.launch_bounds == 0);
      const LaplacianPlan plan = plan_laplacian(params, layout, element_bytes, grid, host);
      CHECK_FALSE(plan.problem.has_value());
      CHECK(plan.zeroed_row_end_axis() == AxisRoles::of(layout).contiguous);
    }
}

TEST_CASE(
    "the host default on AVX2 and AVX-512 hosts with few threads: 4 planes per work item, row "
    "blocks whose "
    "six planes fit half the core's L2",
    "[laplacian]") {
  ExecLimits host;
  host.backend = "OpenMP";
  host.concurrency = 2;
  host.host_hardware_threads = 2;
  using Tile = std::array<std::int64_t, 3>;
  const auto config = [&](const Grid& grid, Layout layout, int element_bytes) {
    return default_params(host, layout, grid, element_bytes);
  };
  const Grid cube = Grid::whole({384, 384, 384}, {0, 0, 0}, {1, 1, 1});
  const Grid big_cube = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  const Tile kokkos_tile{0, 0, 0};
  host.core_cache_bytes = 2 << 20;
  if (!host_simd_lines_compiled()) {
    // One plane at a time and Kokkos' tile.
    CHECK(config(cube, Layout::right, 8).m_slow == 1);
    CHECK(config(cube, Layout::right, 8).tile == kokkos_tile);
    return;
  }
  // 2 MiB of L2, 384^3 double: six planes' rows of 386 doubles take 18.5 kB, so 54 rows fit in 1
  // MiB: 3 work items of 16 rows, through 191 planes per thread, 48 work items of 4 planes (the
  // tile's slowest-axis entry counts work items). 512^3: 40 rows, 2 items, through 255 planes, 64
  // work items. Float (rows of half the bytes): 111 rows, 6 items.
  CHECK(config(cube, Layout::right, 8).m_slow == 4);
  CHECK(config(cube, Layout::right, 8).tile == Tile{48, 3, 0});
  CHECK(config(cube, Layout::left, 8).tile == Tile{0, 3, 48});
  CHECK(config(big_cube, Layout::right, 8).tile == Tile{64, 2, 0});
  CHECK(config(cube, Layout::right, 4).tile == Tile{48, 6, 0});
  // 48 work items of 4 planes by 3 of 16 rows: 192 planes, 48 rows per work group.
  const LaplacianPlan cube_plan =
      plan_laplacian(config(cube, Layout::right, 8), Layout::right, 8, cube, host);
  REQUIRE_FALSE(cube_plan.problem);
  CHECK(cube_plan.points_per_group() == Tile{192, 48, 382});
  // An L2 too small for one work item's rows, or unknown: Kokkos' tile.
  host.core_cache_bytes = 128 << 10;
  CHECK(config(cube, Layout::right, 8).tile == kokkos_tile);
  host.core_cache_bytes = 0;
  CHECK(config(cube, Layout::right, 8).tile == kokkos_tile);

  // The tiles on a grid small enough to verify, every point against the reference bitwise and
  // nothing written outside the update box: 27 x 43 x 36 updated points (layout left: 36 planes
  // of rows of 27), 3 work items of rows; 14 (left: 18) planes per thread, 4 (5) work items of 4
  // planes. Six planes' rows of 38 (left: 29) doubles take 1824 (1392) bytes: half of 80 KiB
  // holds 22 (29) of them, so blocks of 1 item; half of 160 KiB 44 (58), 2 items (3); half of 1
  // MiB all 3 items.
  const Grid grid = Grid::whole({29, 45, 38}, {0, 0, 0}, {0.1, 0.2, 0.3});
  struct Case {
    std::int64_t cache;
    Layout layout;
    Tile tile;
  };
  for (const Case& c :
       {Case{0, Layout::right, kokkos_tile}, Case{80 << 10, Layout::right, {4, 1, 0}},
        Case{80 << 10, Layout::left, {0, 1, 5}}, Case{160 << 10, Layout::right, {4, 2, 0}},
        Case{160 << 10, Layout::left, {0, 3, 5}}, Case{1 << 20, Layout::right, {4, 3, 0}}}) {
    host.core_cache_bytes = c.cache;
    const auto k = config(grid, c.layout, 8);
    INFO("L2 " << c.cache << " layout " << to_string(c.layout));
    CHECK(k.tile == c.tile);
    const LaplacianPlan plan = plan_laplacian(k, c.layout, 8, grid, host);
    REQUIRE_FALSE(plan.problem);
    const auto v = verify_in<double>(c.layout, plan, grid);
    CHECK(v.passed);
    CHECK(v.reference_mismatches == 0);
    CHECK(v.untouched_violations == 0);
  }
}

TEST_CASE(
    "the host default on hosts with 8 or more hardware threads: y blocks marched through plane "
    "chunks, as tall as a quarter of the core's L2 allows",
    "[laplacian]") {
  ExecLimits host;
  host.backend = "OpenMP";
  host.concurrency = 16;
  const Grid cube = Grid::whole({384, 384, 384}, {0, 0, 0}, {1, 1, 1});
  const Grid big_cube = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  const Grid brick = Grid::whole({100, 384, 52}, {0, 0, 0}, {1, 1, 1});
  const auto config = [&](const Grid& grid, Layout layout, int hardware_threads) {
    host.host_hardware_threads = hardware_threads;
    return default_params(host, layout, grid, 8);
  };
  using Tile = std::array<std::int64_t, 3>;
  // One plane per work item on many-core hosts: the tile's slowest-axis entry is planes.
  CHECK(config(cube, Layout::right, 16).m_slow == 1);
  // L2 unknown: one work item of 16 rows by a thread's share of the planes; 382 updated planes
  // over 16 threads: 24 each (the last thread 22).
  CHECK(config(cube, Layout::right, 16).tile == Tile{24, 1, 0});
  CHECK(config(cube, Layout::left, 16).tile == Tile{0, 1, 24});
  CHECK(config(brick, Layout::right, 8).tile == Tile{7, 1, 0});
  CHECK(config(brick, Layout::left, 64).tile == Tile{0, 1, 4});
  CHECK(config(cube, Layout::right, 7).tile == Tile{0, 0, 0});
  CHECK(config(cube, Layout::right, 0).tile == Tile{0, 0, 0});

  // 2 MiB of L2 (the GPU machine's Xeon host). 384^3: 24 work items of 16 rows. 2 plane chunks
  // by 8 blocks of 3 items: a thread reads 50 rows of 193 planes, 9650 plane rows, and the
  // three planes' 50 rows of 386 doubles take 463 kB, under a quarter of the L2. 1 chunk by 16
  // blocks of 2 items leaves 4 threads idle and reads 34 x 384; 4 chunks by 4 blocks of 6 items
  // would need 908 kB.
  host.core_cache_bytes = 2 << 20;
  CHECK(config(cube, Layout::right, 16).tile == Tile{191, 3, 0});
  CHECK(config(cube, Layout::left, 16).tile == Tile{0, 3, 191});
  // 512^3: 32 items; 2 chunks by 8 blocks of 4 items would need 3 x 66 x 514 x 8 = 814 kB, so 1
  // chunk by 16 blocks of 2 items (419 kB).
  CHECK(config(big_cube, Layout::right, 16).tile == Tile{510, 2, 0});
  CHECK(config(big_cube, Layout::left, 16).tile == Tile{0, 2, 510});
  // 8 threads at 384^3: 1 chunk by 8 blocks of 3 items (2 chunks by 4 blocks of 6 do not fit).
  host.concurrency = 8;
  CHECK(config(cube, Layout::right, 8).tile == Tile{382, 3, 0});
  // 512 KiB of L2: no block taller than 16 rows fits a quarter of it at 384^3.
  host.concurrency = 16;
  host.core_cache_bytes = 512 << 10;
  CHECK(config(cube, Layout::right, 16).tile == Tile{24, 1, 0});
  for (Layout layout : {Layout::left, Layout::right})
    CHECK_FALSE(
        plan_laplacian(config(brick, layout, 16), layout, 8, brick, host).problem.has_value());

  // The marched tiles on a grid small enough to verify: every point against the reference,
  // bitwise, and nothing written outside the update box. 27 x 43 x 36 updated points (layout
  // right; left: 36 planes along z, rows of 27), 3 work items of rows, 3 threads. L2 unknown:
  // 3 plane chunks by 1 item, 9 tiles. 100 kB of L2: blocks of 16 rows through all planes (3
  // blocks of 43 rows by 3 chunks would need 3 x 45 x 38 x 8 = 41 kB, more than a quarter).
  host.concurrency = 3;
  const Grid grid = Grid::whole({29, 45, 38}, {0, 0, 0}, {0.1, 0.2, 0.3});
  struct Case {
    std::int64_t cache;
    Layout layout;
    Tile tile;
  };
  for (const Case& c :
       {Case{0, Layout::right, {9, 1, 0}}, Case{0, Layout::left, {0, 1, 12}},
        Case{100000, Layout::right, {27, 1, 0}}, Case{100000, Layout::left, {0, 1, 36}},
        Case{1 << 20, Layout::right, {9, 3, 0}}}) {
    host.core_cache_bytes = c.cache;
    const auto k = config(grid, c.layout, 16);
    INFO("L2 " << c.cache << " layout " << to_string(c.layout));
    CHECK(k.tile == c.tile);
    const LaplacianPlan plan = plan_laplacian(k, c.layout, 8, grid, host);
    REQUIRE_FALSE(plan.problem);
    const auto v = verify_in<double>(c.layout, plan, grid);
    CHECK(v.passed);
    CHECK(v.reference_mismatches == 0);
    CHECK(v.untouched_violations == 0);
  }
}

TEST_CASE(
    "the GPU default puts 128 threads along the contiguous axis, the rest along y when it is "
    "short",
    "[laplacian]") {
  const ExecLimits gpu = h100_limits();
  struct Case {
    Index3 points;
    Layout layout;
    int m_contiguous;                         // pairs where the contiguous extent is even
    std::array<std::int64_t, 3> policy_tile;  // contiguous axis, y blocks, slowest-axis blocks
  };
  // Double: 4 x 2 blocks in pairs, 2 per work item (8 x 1 one point a work item where the rows
  // cannot hold pairs, 3 per work item); the row ends have work items too.
  const Case cases[] = {
      {{512, 512, 512}, Layout::right, 2, {128, 1, 1}},
      {{512, 512, 512}, Layout::left, 2, {128, 1, 1}},
      {{4096, 2048, 128}, Layout::right, 2, {64, 2, 1}},  // 64 pairs, row ends included
      {{128, 2048, 4096}, Layout::left, 2, {64, 2, 1}},
      {{20, 300, 7}, Layout::left, 2, {16, 8, 1}},   // 10 pairs and a row end: 16 lanes
      {{65, 40, 66}, Layout::left, 1, {128, 1, 1}},  // 63 points + 2 row ends
      {{66, 40, 63}, Layout::right, 1, {64, 2, 1}}};
  for (const auto& c : cases) {
    const Grid grid = Grid::whole(c.points, {0, 0, 0}, {1, 1, 1});
    const auto params = default_params(gpu, c.layout, grid, 8);
    const LaplacianPlan plan = plan_laplacian(params, c.layout, 8, grid, gpu);
    INFO(format_triple(c.points) << " " << to_string(c.layout));
    CHECK(params.kernel == LaplacianKernel::blocked);
    CHECK(params.m_contiguous == c.m_contiguous);
    CHECK(params.m == (c.m_contiguous == 2 ? 4 : 8));
    CHECK(params.m_slow == (c.m_contiguous == 2 ? 2 : 1));
    CHECK(params.blocks_per_item == (c.m_contiguous == 2 ? 2 : 3));
    CHECK(params.zero_row_ends);
    CHECK(params.launch_bounds == 128);
    CHECK(plan.mapping == resolve_mapping(c.layout, IterOrder::automatic, true));
    CHECK(to_policy_order(plan.mapping, params.tile) == c.policy_tile);
    CHECK_FALSE(plan.problem.has_value());
    REQUIRE(plan.launch);
    CHECK(plan.launch->tile == c.policy_tile);
    CHECK(plan.zeroed_row_end_axis() == AxisRoles::of(c.layout).contiguous);
  }
  // Float in quads, 2 blocks a work item: rows of 64 values are 16 lanes, so a work group of
  // 16 x 8 spans two rows a warp (32 lanes left half of them idle).
  const struct {
    Index3 points;
    Layout layout;
    std::array<std::int64_t, 3> policy_tile;
  } quads[] = {{{4096, 2048, 64}, Layout::right, {16, 8, 1}},
               {{64, 2048, 4096}, Layout::left, {16, 8, 1}},
               {{4096, 2048, 128}, Layout::right, {32, 4, 1}},
               {{512, 512, 512}, Layout::left, {128, 1, 1}}};
  for (const auto& c : quads) {
    const Grid grid = Grid::whole(c.points, {0, 0, 0}, {1, 1, 1});
    const auto params = default_params(gpu, c.layout, grid, 4);
    const LaplacianPlan plan = plan_laplacian(params, c.layout, 4, grid, gpu);
    INFO(format_triple(c.points) << " " << to_string(c.layout) << " float");
    CHECK(params.m_contiguous == 4);
    CHECK(params.blocks_per_item == 2);
    CHECK_FALSE(plan.problem.has_value());
    REQUIRE(plan.launch);
    CHECK(plan.launch->tile == c.policy_tile);
  }
  // A work group of 128 x 1 x 1 work items at 512^3 covers 256 points along the contiguous axis
  // (pairs), 4 along y and 2 blocks of 2 along the slowest axis.
  const Grid cube512 = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::right, Layout::left}) {
    const LaplacianPlan plan =
        plan_laplacian(default_params(gpu, layout, cube512, 8), layout, 8, cube512, gpu);
    CHECK(plan.points_per_group() == (layout == Layout::right
                                          ? std::array<std::int64_t, 3>{4, 4, 256}
                                          : std::array<std::int64_t, 3>{256, 4, 4}));
  }
  // Parts keep the four planes a 4 x 2 block reads within a quarter of the L2 (12.5 MiB of 50):
  // 32 MiB at 1024^3, 3 parts.
  const Grid cube = Grid::whole({1024, 1024, 1024}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::right, Layout::left})
    CHECK(default_params(gpu, layout, cube, 8).parts == 3);
}

TEST_CASE(
    "the GPU default: 4 x 2 blocks, 2 per item, in float quads or pairs where rows hold them; "
    "else one point: float 4 x 2 x 3 (right), 8 x 1 x 4 (left); double 8 x 1 x 3",
    "[laplacian]") {
  const ExecLimits gpu = h100_limits();
  const Grid cube = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  const Grid short_rows = Grid::whole({64, 2048, 4096}, {0, 0, 0}, {1, 1, 1});
  const Grid odd = Grid::whole({513, 512, 513}, {0, 0, 0}, {1, 1, 1});
  const Grid even = Grid::whole({514, 512, 514}, {0, 0, 0}, {1, 1, 1});  // pairs, not quads
  struct Case {
    int element_bytes;
    Layout layout;
    const Grid* grid;
    int m, m_slow, m_contiguous, blocks_per_item;
  };
  const Case cases[] = {
      {4, Layout::right, &cube, 4, 2, 4, 2},      {4, Layout::left, &cube, 4, 2, 4, 2},
      {4, Layout::left, &short_rows, 4, 2, 4, 2}, {4, Layout::right, &even, 4, 2, 2, 2},
      {4, Layout::left, &even, 4, 2, 2, 2},       {8, Layout::left, &even, 4, 2, 2, 2},
      {4, Layout::right, &odd, 4, 2, 1, 3},       {4, Layout::left, &odd, 8, 1, 1, 4},
      {8, Layout::right, &cube, 4, 2, 2, 2},      {8, Layout::left, &short_rows, 4, 2, 2, 2},
      {8, Layout::right, &odd, 8, 1, 1, 3},       {8, Layout::left, &odd, 8, 1, 1, 3}};
  for (const auto& c : cases) {
    const auto params = default_params(gpu, c.layout, *c.grid, c.element_bytes);
    INFO(format_triple(c.grid->points) << " " << to_string(c.layout) << " " << c.element_bytes);
    CHECK(params.kernel == LaplacianKernel::blocked);
    CHECK(params.m == c.m);
    CHECK(params.m_slow == c.m_slow);
    CHECK(params.m_contiguous == c.m_contiguous);
    CHECK(params.blocks_per_item == c.blocks_per_item);
    CHECK(params.streaming_stores);
    CHECK_FALSE(
        plan_laplacian(params, c.layout, c.element_bytes, *c.grid, gpu).problem.has_value());
  }
  // On a host one point a work item.
  ExecLimits host = gpu;
  host.gpu = false;
  LaplacianKernelRequest blocked;
  blocked.kernel = LaplacianKernel::blocked;
  CHECK(resolve_laplacian_params(blocked, host, Layout::right, cube, 4).m_contiguous == 1);
  // Pairs asked for with a block they are not compiled for fall back to one point under auto.
  blocked.m = 16;
  CHECK(resolve_laplacian_params(blocked, gpu, Layout::right, cube, 4).m_contiguous == 1);
}

TEST_CASE("verification catches a wrong point and a point written outside the update box",
          "[laplacian]") {
  const Grid grid = Grid::whole({6, 5, 4}, {0, 0, 0}, {1, 1, 1});
  auto f = allocate_field<double, Kokkos::LayoutLeft>("f", grid);
  auto fh = Kokkos::create_mirror_view(f);
  const Box update = laplacian_update_box(grid);
  const auto expected = [](Index i, Index j, Index k) { return double(i + 10 * j + 100 * k); };
  for (Index k = 0; k < 4; ++k)
    for (Index j = 0; j < 5; ++j)
      for (Index i = 0; i < 6; ++i)
        fh(i, j, k) = update.contains({i, j, k}) ? expected(i, j, k)
                                                 : std::numeric_limits<double>::quiet_NaN();
  Kokkos::deep_copy(f, fh);
  auto clean = laplacian_detail::compare_on_host(f, grid, expected);
  CHECK(clean.mismatches == 0);
  CHECK(clean.untouched_violations == 0);
  CHECK(clean.max_diff == 0);

  fh(2, 2, 2) += 0.5;  // a wrong interior value
  fh(0, 3, 1) = 1.0;   // a boundary point the kernel must not write
  Kokkos::deep_copy(f, fh);
  auto broken = laplacian_detail::compare_on_host(f, grid, expected);
  CHECK(broken.mismatches == 1);
  CHECK(broken.untouched_violations == 1);
  CHECK(broken.max_diff == 0.5);

  fh(2, 2, 2) = std::numeric_limits<double>::quiet_NaN();  // a dropped point stays NaN
  Kokkos::deep_copy(f, fh);
  CHECK(std::isinf(laplacian_detail::compare_on_host(f, grid, expected).max_diff));
}

TEST_CASE("verification of zeroed row ends: 0 exactly there, NaN everywhere else outside",
          "[laplacian]") {
  const Grid grid = Grid::whole({6, 5, 4}, {0, 0, 0}, {1, 1, 1});
  auto f = allocate_field<double, Kokkos::LayoutLeft>("f", grid);
  auto fh = Kokkos::create_mirror_view(f);
  const Box update = laplacian_update_box(grid);  // x 1..4, y 1..3, z 1..2
  const auto expected = [](Index i, Index j, Index k) { return double(i + 10 * j + 100 * k); };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Index k = 0; k < 4; ++k)
    for (Index j = 0; j < 5; ++j)
      for (Index i = 0; i < 6; ++i) {
        const bool row_end = (i == 0 || i == 5) && update.contains({1, j, k});
        fh(i, j, k) = update.contains({i, j, k}) ? expected(i, j, k) : row_end ? 0.0 : nan;
      }
  Kokkos::deep_copy(f, fh);
  const int x_axis = 0;
  CHECK(laplacian_detail::compare_on_host(f, grid, expected, x_axis).untouched_violations == 0);
  // Without row ends expected, each of the 3 x 2 rows' two zeros is a write outside.
  CHECK(laplacian_detail::compare_on_host(f, grid, expected).untouched_violations == 12);
  // Along z the row ends are other points (24, NaN here) and the 12 zeros are writes outside.
  CHECK(laplacian_detail::compare_on_host(f, grid, expected, 2).untouched_violations == 36);

  fh(5, 2, 1) = nan;  // a row end not written
  fh(0, 0, 1) = 0.0;  // beside a row end, outside the updated rows
  fh(0, 2, 1) = -1;   // a row end written with something else
  Kokkos::deep_copy(f, fh);
  CHECK(laplacian_detail::compare_on_host(f, grid, expected, x_axis).untouched_violations == 3);
}
