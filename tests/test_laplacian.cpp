// Laplacian kernels: exactness, convergence, invariance across every configuration, validation.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "core/deck.hpp"
#include "laplacian/compare.hpp"
#include "laplacian/kernels.hpp"
#include "laplacian/laplacian.hpp"
#include "laplacian/laplacian_deck.hpp"
#include "laplacian/laplacian_run.hpp"

using namespace kstencil;

namespace {

template <class T, class L>
std::vector<T> laplacian_of(TestField kind, const LaplacianKernelConfig& config, const Grid& grid) {
  auto u = allocate_field<T, L>("u", grid);
  auto f = allocate_field<T, L>("f", grid);
  fill_test_field(TestFieldSpec::of(kind, grid), grid, u);
  apply_laplacian<T, L>(config, grid, u, f);
  return to_host_x_fastest(f, grid, grid.global());
}

template <class L>
std::vector<LaplacianKernelConfig> all_configs(bool gpu_mapping) {
  std::vector<LaplacianKernelConfig> configs;
  const Layout layout = layout_of<L>();
  const std::array<std::int64_t, 3> tiles[] = {{0, 0, 0}, {4, 4, 4}, {1, 3, 7}, {8, 1, 2}};
  for (const auto& tile : tiles)  // line takes no order, parts or launch bound
    for (int m : {1, 2, 16})
      for (int planes : {1, 4})
        for (bool streaming : {false, true}) {
          LaplacianKernelConfig line;
          line.variant = LaplacianVariant::line;
          line.tile = tile;
          line.m = m;
          line.m_slow = planes;
          line.streaming_stores = streaming;
          configs.push_back(line);
        }
  for (const auto& tile : tiles)  // march has its own mapping: no iteration order
    for (int m : {1, 2, 8, 16})
      for (int parts : {1, 3, 100})
        for (int bound : {0, 128})
          for (bool streaming : {false, true}) {
            LaplacianKernelConfig c;
            c.variant = LaplacianVariant::march;
            c.tile = tile;
            c.m = m;
            c.parts = parts;
            c.launch_bounds = bound;
            c.streaming_stores = streaming;
            configs.push_back(c);
          }
  // Scratch team tiles (contiguous axis, y, slowest axis) within every backend's team scratch,
  // all larger than some of the grid's extents so that every clamped load and dropped store runs.
  const std::array<std::int64_t, 3> team_tiles[] = {{32, 2, 1},  {32, 8, 8},  {64, 4, 3},
                                                    {64, 2, 64}, {128, 2, 4}, {128, 4, 2}};
  for (const auto& team : team_tiles)
    for (int parts : {1, 3})
      for (bool streaming : {false, true}) {
        LaplacianKernelConfig c;
        c.variant = LaplacianVariant::scratch;
        const int contiguous = layout == Layout::right ? 2 : 0;
        c.tile[contiguous] = team[0];
        c.tile[1] = team[1];
        c.tile[2 - contiguous] = team[2];
        c.parts = parts;
        c.streaming_stores = streaming;
        configs.push_back(c);
      }
  for (IterOrder order : {IterOrder::left, IterOrder::right, IterOrder::automatic})
    for (auto variant : {LaplacianVariant::mdrange, LaplacianVariant::register_blocked,
                         LaplacianVariant::subdomain})
      for (const auto& tile : tiles)
        for (int m : {1, 2, 8, 16})
          for (int m_slow : {1, 2, 4})
            for (int parts : {1, 3})
              for (int bound : {0, 128}) {
                const bool column = variant != LaplacianVariant::mdrange;
                if (!column && (m != 1 || m_slow != 1 || parts != 1)) continue;
                if (variant == LaplacianVariant::register_blocked && parts != 1) continue;
                // m_slow > 1 with each m once per variant and tile (the tails along both
                // blocked axes are what it adds).
                if (m_slow > 1 && (parts != 1) == (variant == LaplacianVariant::subdomain))
                  continue;
                if (m * m_slow > max_block_points) continue;  // refused: see the test below
                LaplacianKernelConfig c;
                c.variant = variant;
                c.mapping = resolve_mapping(layout, order, gpu_mapping);
                c.tile = tile;
                c.m = m;
                c.m_slow = m_slow;
                c.parts = parts;
                c.launch_bounds = bound;
                c.streaming_stores = bound != 0;  // both store kinds for every m, tile, parts
                // 1 to 4 consecutive blocks per work item across parts and bounds: with the
                // grids' 13-21 points along the slowest axis, the last item's blocks run past
                // the end (m_slow 4 x 4 blocks) or stop inside it.
                if (column) c.blocks_per_item = 1 + 2 * (parts == 3) + (bound != 0);
                c.zero_row_ends = m_slow == 1;  // each m with and without
                // Parts in one launch and in one launch each, for every m and bound (tiles
                // alternate); the last part of the grids' 16 or 21 points along y holds fewer
                // blocks than the others for several m.
                c.parts_in_one_launch = (&tile - tiles) % 2 == 0;
                configs.push_back(c);
              }
  return configs;
}

std::string describe(const LaplacianKernelConfig& c) {
  return to_string(c.variant) + " " + c.mapping.describe() + " tile " + format_triple(c.tile) +
         " m " + std::to_string(c.m) + " m_slow " + std::to_string(c.m_slow) + " blocks " +
         std::to_string(c.blocks_per_item) + " parts " + std::to_string(c.parts) + " bounds " +
         std::to_string(c.launch_bounds) + (c.streaming_stores ? "" : " plain stores") +
         (c.zero_row_ends ? "" : " row ends untouched") +
         (c.parts_in_one_launch ? "" : " one launch per part");
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
      INFO(describe(config));
      REQUIRE(wrong == 0);
    }
}

// An H100's limits as Kokkos reports them, for checks that do not need the device.
ExecLimits h100_limits() {
  ExecLimits gpu;
  gpu.backend = "Cuda";
  gpu.gpu = true;
  gpu.max_threads_per_block = 1024;
  gpu.max_block_dims = {1024, 1024, 64};
  gpu.max_grid_dims = {2147483647, 65535, 65535};
  gpu.llc_bytes = 50 << 20;
  return gpu;
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

TEST_CASE("sine field: error against the analytic Laplacian falls 4x per halving of h",
          "[laplacian]") {
  std::vector<double> errors;
  for (Index n : {17, 33, 65}) {
    const double h = 1.0 / static_cast<double>(n - 1);
    const Grid grid = Grid::whole({n, n, n}, {0, 0, 0}, {h, h, h});
    LaplacianKernelConfig config;
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
    "every layout, iteration order, tile, variant, m, parts and launch bound gives "
    "the bitwise same result",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  const Grid grid = Grid::whole({19, 23, 17}, {0, 0, 0}, {0.1, 0.2, 0.3});
  const LaplacianKernelConfig reference_config{};
  const auto reference = laplacian_of<double, TestType>(TestField::sine, reference_config, grid);
  const auto other_layout =
      std::is_same<TestType, Kokkos::LayoutLeft>::value
          ? laplacian_of<double, Kokkos::LayoutRight>(TestField::sine, reference_config, grid)
          : laplacian_of<double, Kokkos::LayoutLeft>(TestField::sine, reference_config, grid);
  REQUIRE(reference == other_layout);
  std::size_t checked = 0;
  for (bool gpu_mapping : {false, true})
    for (const auto& config : all_configs<TestType>(gpu_mapping)) {
      INFO(describe(config));
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
  LaplacianKernelConfig config;
  config.variant = LaplacianVariant::subdomain;
  config.m = 4;
  config.parts = 3;
  config.mapping = resolve_mapping(Layout::right, IterOrder::automatic, false);
  for (TestField field : {TestField::sine, TestField::quadratic}) {
    const auto v = verify_laplacian<float, Kokkos::LayoutRight>(config, grid, field);
    CHECK(v.passed);
    CHECK(v.reference_mismatches == 0);
    CHECK(v.untouched_violations == 0);
    CHECK(v.quadratic_max_error <= v.quadratic_tolerance);
  }
}

TEMPLATE_TEST_CASE(
    "column kernels store exactly 0 at the two ends of each updated row and touch nothing else "
    "outside the update range, or with zero_row_ends = false nothing at all",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // 21 x 18 x 13: rows of 19 or 11 updated points, so the row-end work items share warps with
  // updated ones and with idle ones past the end.
  const Grid grid = Grid::whole({21, 18, 13}, {0, 0, 0}, {0.5, 0.25, 2.0});
  std::size_t checked = 0;
  for (bool gpu_mapping : {false, true})
    for (auto config : all_configs<TestType>(gpu_mapping)) {
      if (!is_column_kernel(config)) continue;
      for (bool zero : {false, true}) {
        config.zero_row_ends = zero;
        INFO(describe(config));
        const auto v = verify_laplacian<double, TestType>(config, grid, TestField::sine);
        CHECK(v.untouched_violations == 0);
        CHECK(v.passed);
        ++checked;
      }
    }
  CHECK(checked > 100);
}

TEMPLATE_TEST_CASE(
    "line kernels with streaming stores: rows of every length and alignment bitwise equal to "
    "plain stores, nothing written outside the update range but the zeroed row ends",
    "[laplacian]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // Rows of 1 to 69 updated points, so that rows start at every offset within a cache line and
  // hold no, one or several whole lines in double (8 per line) and float (16) besides the partial
  // lines at their ends (which store_line writes plainly); verify_laplacian fills f with NaN and
  // counts any point outside the update box that is no longer NaN. 9 planes in work items of 1, 2
  // and 4 (the last item holds the one plane left over); rows of 16, 32 and 64 points make the
  // planes 9 x 16 x 8 bytes (and x 4 for 32 and 64) apart, whole cache lines, so that with
  // AVX-512 the planes of an item go through stencil_lines_avx512 together, and the other lengths
  // plane by plane. With zero_row_ends the points either side of each row must hold 0
  // (verify_laplacian checks them exactly): rows of 16, 32 and 64 points in double and 32 and 64
  // in float then fill whole cache lines with them and are streamed whole.
  INFO("non-temporal host stores compiled: " << host_streaming_stores_compiled());
  INFO("AVX-512 host lines compiled: " << host_avx512_lines_compiled());
  std::size_t checked = 0;
  for (Index length : {3, 4, 10, 16, 18, 19, 26, 32, 37, 64, 71})
    for (int m : {1, 4, 16})
      for (int planes : {1, 2, 4})
        for (bool zero_ends : {false, true}) {
          const bool right = std::is_same<TestType, Kokkos::LayoutRight>::value;
          const Index3 points = right ? Index3{11, 9, length} : Index3{length, 9, 11};
          const Grid grid = Grid::whole(points, {0, 0, 0}, {0.1, 0.2, 0.3});
          LaplacianKernelConfig plain;
          plain.variant = LaplacianVariant::line;
          plain.m = m;
          plain.m_slow = planes;
          plain.streaming_stores = false;
          plain.zero_row_ends = zero_ends;
          LaplacianKernelConfig streaming = plain;
          streaming.streaming_stores = true;
          INFO("grid " << format_triple(points) << " m " << m << " m_slow " << planes
                       << " zero_row_ends " << zero_ends);
          REQUIRE(laplacian_of<double, TestType>(TestField::sine, streaming, grid) ==
                  laplacian_of<double, TestType>(TestField::sine, plain, grid));
          REQUIRE(laplacian_of<float, TestType>(TestField::sine, streaming, grid) ==
                  laplacian_of<float, TestType>(TestField::sine, plain, grid));
          const auto v = verify_laplacian<double, TestType>(streaming, grid, TestField::sine);
          CHECK(v.passed);
          CHECK(v.untouched_violations == 0);
          const auto vf = verify_laplacian<float, TestType>(streaming, grid, TestField::sine);
          CHECK(vf.passed);
          CHECK(vf.untouched_violations == 0);
          ++checked;
        }
  CHECK(checked == 198);
}

TEST_CASE("subdomain parts and register blocks cover the y range exactly once", "[laplacian]") {
  // Layout right with the identity policy order: policy dimension 0 is the slowest axis (x).
  const Grid grid = Grid::whole({8, 50, 9}, {0, 0, 0}, {1, 1, 1});
  for (bool one_launch : {false, true})
    for (int parts : {1, 2, 3, 7, 48})
      for (int m : {1, 2, 4, 8, 16}) {
        LaplacianKernelConfig config;
        config.variant = LaplacianVariant::subdomain;
        config.parts = parts;
        config.m = m;
        config.parts_in_one_launch = one_launch;
        config.mapping = resolve_mapping(Layout::right, IterOrder::right, false);
        const auto plans = laplacian_detail::plan_launches(config, grid);
        INFO("parts " << parts << " m " << m << (one_launch ? " in one launch" : ""));
        std::vector<int> covered(50, 0);
        for (const auto& plan : plans) {
          if (!plan.column) {  // m = 1: one point per work item, j from the policy
            for (Index j = plan.lower[1]; j < plan.upper[1]; ++j) ++covered[j];
            continue;
          }
          // The y points ColumnStencil updates from the first work item along x of each part.
          REQUIRE(plan.upper[0] % plan.slow_items_per_part == 0);
          for (Index item = 0; item < plan.upper[0]; item += plan.slow_items_per_part)
            for (Index block = 0; block < plan.upper[1]; ++block) {
              const Index part = item / plan.slow_items_per_part;
              const Index j0 = plan.j_begin + (part * plan.y_blocks_per_part + block) * m;
              for (Index j = j0; j < std::min(j0 + m, plan.j_end); ++j) ++covered[j];
            }
        }
        for (Index j = 0; j < 50; ++j) {
          INFO("j " << j);
          CHECK(covered[j] == (j >= 1 && j < 49 ? 1 : 0));
        }
        // Parts of whole blocks: 48 updated rows in parts of ceil(48 / parts) rounded up to m.
        const Index chunk = ((48 + parts - 1) / parts + m - 1) / m * m;
        const std::size_t part_count = static_cast<std::size_t>((48 + chunk - 1) / chunk);
        // m = 1 runs the one-point kernel, one launch per part.
        CHECK(plans.size() == (one_launch && m > 1 ? 1 : part_count));
        if (one_launch && m > 1)
          CHECK(plans[0].upper[0] == plans[0].slow_items_per_part * Index(part_count));
      }
}

TEST_CASE("Divisor's multiply and shift equal integer division", "[laplacian]") {
  using laplacian_detail::Divisor;
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
    "auto subdomain parts keep the planes a work item reads within a quarter of the "
    "last-level cache",
    "[laplacian]") {
  const Grid grid = Grid::whole({2048, 1024, 256}, {0, 0, 0}, {1, 1, 1});
  const std::int64_t llc = 50 << 20;  // H100 L2
  // LayoutLeft: planes are x-y, 2048 * 1024 * 8 B = 16 MiB; 3 planes / parts <= 12.5 MiB -> 4,
  // the 4 planes of a 4 x 2 block -> 6.
  CHECK(auto_subdomain_parts(grid, Layout::left, 8, llc, 8, 3) == 4);
  CHECK(auto_subdomain_parts(grid, Layout::left, 8, llc, 4, 4) == 6);
  // 1024^3: 8 MiB planes -> 2 parts for 3 planes, 3 for 4; 512^3: 2 MiB planes -> 1.
  const Grid cube = Grid::whole({1024, 1024, 1024}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_subdomain_parts(cube, Layout::right, 8, llc, 4, 3) == 2);
  CHECK(auto_subdomain_parts(cube, Layout::right, 8, llc, 4, 4) == 3);
  const Grid cube512 = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_subdomain_parts(cube512, Layout::left, 8, llc, 4, 4) == 1);
  // LayoutRight: planes are z-y, 256 * 1024 * 8 B = 2 MiB: one part.
  CHECK(auto_subdomain_parts(grid, Layout::right, 8, llc, 4, 4) == 1);
  CHECK(auto_subdomain_parts(grid, Layout::left, 8, 0, 4, 4) == 1);
  // Six planes: 6 x 8 MiB / 12.5 MiB -> 4 parts at 1024^3.
  CHECK(auto_subdomain_parts(cube, Layout::right, 8, llc, 4, 6) == 4);
}

TEST_CASE("scratch tiles cover the update box exactly once", "[laplacian]") {
  const Grid grid = Grid::whole({70, 50, 9}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::right, Layout::left})
    for (int parts : {1, 2, 3, 7, 48})
      for (std::int64_t y : {2, 4, 8}) {
        LaplacianKernelConfig config;
        config.variant = LaplacianVariant::scratch;
        config.layout = layout;
        config.parts = parts;
        config.tile = {0, y, 0};
        const int contiguous = layout == Layout::right ? 2 : 0;
        std::vector<int> covered(50, 0);
        for (const auto& plan : laplacian_detail::plan_scratch(config, grid)) {
          for (Index j = plan.j_begin; j < plan.j_end; ++j) ++covered[j];
          INFO("parts " << parts << " y " << y);
          CHECK(plan.c_origin % laplacian_detail::column_alignment == 0);
          CHECK(plan.c_origin <= plan.c_begin);
          CHECK(plan.c_begin == 1);
          CHECK(plan.c_end == grid.points[contiguous] - 1);
          CHECK(plan.s_begin == 1);
          CHECK(plan.s_end == grid.points[2 - contiguous] - 1);
          CHECK((plan.j_begin - 1) % y == 0);  // parts hold whole tiles
        }
        for (Index j = 0; j < 50; ++j) {
          INFO("parts " << parts << " y " << y << " j " << j);
          CHECK(covered[j] == (j >= 1 && j < 49 ? 1 : 0));
        }
      }
}

TEST_CASE("scratch tiles outside the compiled set or Kokkos' team scratch are refused",
          "[laplacian]") {
  const Grid grid = Grid::whole({40, 40, 40}, {0, 0, 0}, {1, 1, 1});
  LaplacianKernelConfig config;
  config.variant = LaplacianVariant::scratch;
  config.layout = Layout::left;
  const ExecLimits limits = default_exec_limits();
  CHECK_FALSE(laplacian_config_problem(config, grid, limits).has_value());  // 64 x 4 x 64
  config.tile = {48, 4, 4};
  REQUIRE(laplacian_config_problem(config, grid, limits).has_value());
  CHECK_THAT(*laplacian_config_problem(config, grid, limits),
             Catch::Matchers::ContainsSubstring("32, 64 or 128"));
  config.tile = {64, 16, 4};
  CHECK(laplacian_config_problem(config, grid, limits).has_value());
  // 128 x 8 needs 2 x 130 x 10 doubles = 20800 bytes, within every backend's team scratch.
  config.tile = {128, 8, 64};
  CHECK_FALSE(laplacian_config_problem(config, grid, limits).has_value());
}

TEST_CASE("register blocks of more than max_block_points points are refused", "[laplacian]") {
  const Grid grid = Grid::whole({20, 20, 20}, {0, 0, 0}, {1, 1, 1});
  const ExecLimits limits = default_exec_limits();
  LaplacianKernelConfig config;
  config.variant = LaplacianVariant::register_blocked;
  config.m = 8;
  config.m_slow = 4;
  REQUIRE(laplacian_config_problem(config, grid, limits));
  CHECK_THAT(*laplacian_config_problem(config, grid, limits),
             Catch::Matchers::ContainsSubstring("m x m_slow must be at most 16"));
  config.m_slow = 2;
  CHECK_FALSE(laplacian_config_problem(config, grid, limits));
  config.variant = LaplacianVariant::march;  // march ignores m_slow
  config.m_slow = 4;
  CHECK_FALSE(laplacian_config_problem(config, grid, limits));

  const Deck deck = Deck::parse("", "lap.toml",
                                {"kernel.variant=\"subdomain\"", "kernel.m=16", "kernel.m_slow=2"},
                                laplacian_schema());
  CHECK_THROWS_WITH(laplacian_setup_from_deck(deck, limits),
                    Catch::Matchers::ContainsSubstring("lap.toml: [kernel] m_slow = 2") &&
                        Catch::Matchers::ContainsSubstring("a block of 32 points") &&
                        Catch::Matchers::ContainsSubstring("m x m_slow at most 16"));
}

TEST_CASE("variant auto names the kernel keys the deck set that it does not use", "[laplacian]") {
  const ExecLimits limits = default_exec_limits();
  const auto setup = [&](const std::vector<std::string>& overrides) {
    return laplacian_setup_from_deck(Deck::parse("[grid]\nnx = 16\nny = 16\nnz = 16\n", "lap.toml",
                                                 overrides, laplacian_schema()),
                                     limits);
  };
  CHECK(setup({}).ignored_by_auto.empty());
  CHECK(setup({"kernel.tile=[0, 0, 0]", "kernel.m=8"}).ignored_by_auto.empty());  // the defaults
  CHECK(setup({"kernel.tile=[48, 1, 0]", "kernel.streaming_stores=false", "kernel.parts=2"})
            .ignored_by_auto == std::vector<std::string>{"kernel.tile = [48, 1, 0]",
                                                         "kernel.parts = 2",
                                                         "kernel.streaming_stores = false"});
  // A named variant uses them.
  const auto line = setup({"kernel.variant=line", "kernel.tile=[4, 1, 0]", "kernel.m=4"});
  CHECK(line.ignored_by_auto.empty());
  CHECK(line.kernel.tile == std::array<std::int64_t, 3>{4, 1, 0});
}

TEST_CASE("march slabs cover the slowest axis exactly once", "[laplacian]") {
  const Grid grid = Grid::whole({11, 5, 37}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::left, Layout::right})
    for (int parts : {1, 2, 3, 7, 35, 36, 1000}) {
      LaplacianKernelConfig config;
      config.variant = LaplacianVariant::march;
      config.layout = layout;
      config.parts = parts;
      const auto plan = laplacian_detail::plan_march(config, grid);
      const Index slow_points = grid.points[layout == Layout::right ? 0 : 2];
      std::vector<int> covered(slow_points, 0);
      for (Index part = plan.lower[2]; part < plan.upper[2]; ++part) {
        const Index first = plan.slow_begin + part * plan.slab;
        for (Index s = first; s < std::min<Index>(first + plan.slab, plan.slow_end); ++s)
          ++covered[s];
      }
      for (Index s = 0; s < slow_points; ++s) {
        INFO("layout " << to_string(layout) << " parts " << parts << " plane " << s);
        CHECK(covered[s] == (s >= 1 && s < slow_points - 1 ? 1 : 0));
      }
    }
}

TEST_CASE("auto march slabs give enough work items for the device", "[laplacian]") {
  const std::int64_t h100 = 132 * 2048;
  // 512^3, m = 4: a plane holds 510 * 128 = 65280 work items; 4 waves of 270336 threads -> 17.
  const Grid cube = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_march_parts(cube, Layout::right, h100, 4, 4) == 17);
  CHECK(auto_march_parts(cube, Layout::left, h100, 4, 4) == 17);
  CHECK(auto_march_parts(cube, Layout::left, h100, 1, 4) == 5);
  CHECK(auto_march_parts(cube, Layout::left, h100, 1, 1) == 2);  // 510 * 510 items per plane
  // 2048 x 1024 x 256, layout left: 2046 * 256 work items per plane -> 3 slabs; layout right
  // 254 * 256 -> 17.
  const Grid flat = Grid::whole({2048, 1024, 256}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_march_parts(flat, Layout::left, h100, 4, 4) == 3);
  CHECK(auto_march_parts(flat, Layout::right, h100, 4, 4) == 17);
  // Never slabs thinner than march_min_slab planes; a host with 2 threads needs one slab.
  const Grid thin = Grid::whole({64, 64, 20}, {0, 0, 0}, {1, 1, 1});
  CHECK(auto_march_parts(thin, Layout::left, h100, 4, 4) == 18 / march_min_slab);
  CHECK(auto_march_parts(thin, Layout::left, 2, 4, 4) == 1);
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

  // A configuration's launches are checked with Kokkos' defaults filled in.
  const Grid grid = Grid::whole({64, 64, 64}, {0, 0, 0}, {1, 1, 1});
  LaplacianKernelConfig config;
  config.tile = {0, 0, 128};
  CHECK(laplacian_config_problem(config, grid, gpu).has_value());
  CHECK_FALSE(laplacian_config_problem(config, grid, host).has_value());
}

TEST_CASE("the host default: line kernels of 16 rows per work item with streaming stores",
          "[laplacian]") {
  ExecLimits host;
  host.backend = "OpenMP";
  const Grid grid = Grid::whole({384, 384, 384}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::left, Layout::right})
    for (int element_bytes : {4, 8}) {
      const auto config = default_laplacian_kernel(
          host, layout, resolve_mapping(layout, IterOrder::automatic, false), grid, element_bytes);
      CHECK(config.variant == LaplacianVariant::line);
      CHECK(config.m == 16);
      CHECK(config.m_slow == (host_avx512_lines_compiled() ? 4 : 1));
      CHECK(config.streaming_stores);
      CHECK(config.tile == std::array<std::int64_t, 3>{0, 0, 0});
      CHECK_FALSE(laplacian_config_problem(config, grid, host).has_value());
    }
}

TEST_CASE(
    "the host default on AVX-512 hosts with few threads: 4 planes per work item, row blocks whose "
    "six planes fit half the core's L2",
    "[laplacian]") {
  ExecLimits host;
  host.backend = "OpenMP";
  host.concurrency = 2;
  host.host_hardware_threads = 2;
  using Tile = std::array<std::int64_t, 3>;
  const auto config = [&](const Grid& grid, Layout layout, int element_bytes) {
    return default_laplacian_kernel(
        host, layout, resolve_mapping(layout, IterOrder::automatic, false), grid, element_bytes);
  };
  const Grid cube = Grid::whole({384, 384, 384}, {0, 0, 0}, {1, 1, 1});
  const Grid big_cube = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  const Tile kokkos_tile{0, 0, 0};
  host.core_cache_bytes = 2 << 20;
  if (!host_avx512_lines_compiled()) {
    // One plane at a time and Kokkos' tile.
    CHECK(config(cube, Layout::right, 8).m_slow == 1);
    CHECK(config(cube, Layout::right, 8).tile == kokkos_tile);
    return;
  }
  // 2 MiB of L2, 384^3 double: six planes' rows of 386 doubles take 18.5 kB, so 54 rows fit in 1
  // MiB: 3 work items of 16 rows, through 191 planes per thread. 512^3: 40 rows, 2 items. Float
  // (rows of half the bytes): 111 rows, 6 items.
  CHECK(config(cube, Layout::right, 8).m_slow == 4);
  CHECK(config(cube, Layout::right, 8).tile == Tile{191, 3, 0});
  CHECK(config(cube, Layout::left, 8).tile == Tile{0, 3, 191});
  CHECK(config(big_cube, Layout::right, 8).tile == Tile{255, 2, 0});
  CHECK(config(cube, Layout::right, 4).tile == Tile{191, 6, 0});
  // An L2 too small for one work item's rows, or unknown: Kokkos' tile.
  host.core_cache_bytes = 128 << 10;
  CHECK(config(cube, Layout::right, 8).tile == kokkos_tile);
  host.core_cache_bytes = 0;
  CHECK(config(cube, Layout::right, 8).tile == kokkos_tile);

  // The tiles on a grid small enough to verify, every point against the reference bitwise and
  // nothing written outside the update box: 27 x 43 x 36 updated points (layout left: 36 planes
  // of rows of 27), 3 work items of rows. Six planes' rows of 38 (left: 29) doubles take 1824
  // (1392) bytes: half of 80 KiB holds 22 (29) of them, so blocks of 1 item; half of 160 KiB 44
  // (58), 2 items (3); half of 1 MiB all 3 items.
  const Grid grid = Grid::whole({29, 45, 38}, {0, 0, 0}, {0.1, 0.2, 0.3});
  struct Case {
    std::int64_t cache;
    Layout layout;
    Tile tile;
  };
  for (const Case& c :
       {Case{0, Layout::right, kokkos_tile}, Case{80 << 10, Layout::right, {14, 1, 0}},
        Case{80 << 10, Layout::left, {0, 1, 18}}, Case{160 << 10, Layout::right, {14, 2, 0}},
        Case{160 << 10, Layout::left, {0, 3, 18}}, Case{1 << 20, Layout::right, {14, 3, 0}}}) {
    host.core_cache_bytes = c.cache;
    const auto k = config(grid, c.layout, 8);
    INFO("L2 " << c.cache << " layout " << to_string(c.layout));
    CHECK(k.tile == c.tile);
    const auto v = c.layout == Layout::right
                       ? verify_laplacian<double, Kokkos::LayoutRight>(k, grid, TestField::sine)
                       : verify_laplacian<double, Kokkos::LayoutLeft>(k, grid, TestField::sine);
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
    return default_laplacian_kernel(host, layout,
                                    resolve_mapping(layout, IterOrder::automatic, false), grid, 8);
  };
  using Tile = std::array<std::int64_t, 3>;
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
    CHECK_FALSE(laplacian_config_problem(config(brick, layout, 16), brick, host).has_value());

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
    CHECK(k.tile == c.tile);
    const auto v = c.layout == Layout::right
                       ? verify_laplacian<double, Kokkos::LayoutRight>(k, grid, TestField::sine)
                       : verify_laplacian<double, Kokkos::LayoutLeft>(k, grid, TestField::sine);
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
    std::array<std::int64_t, 3> policy_tile;  // contiguous axis, y blocks, slowest-axis blocks
  };
  // 8 x 1 blocks, 3 per work item, whatever the rows; the row ends have work items too.
  const Case cases[] = {
      {{512, 512, 512}, Layout::right, {128, 1, 1}}, {{512, 512, 512}, Layout::left, {128, 1, 1}},
      {{4096, 2048, 64}, Layout::right, {64, 2, 1}},  // 62 points + 2 row ends
      {{64, 2048, 4096}, Layout::left, {64, 2, 1}},  {{20, 300, 7}, Layout::left, {32, 4, 1}},
      {{65, 40, 66}, Layout::left, {128, 1, 1}}};  // 63 points + 2 row ends
  for (const auto& c : cases) {
    const Grid grid = Grid::whole(c.points, {0, 0, 0}, {1, 1, 1});
    const Mapping mapping = resolve_mapping(c.layout, IterOrder::automatic, true);
    const auto config = default_laplacian_kernel(gpu, c.layout, mapping, grid, 8);
    INFO(format_triple(c.points) << " " << to_string(c.layout));
    CHECK(config.variant == LaplacianVariant::subdomain);
    CHECK(config.m == 8);
    CHECK(config.m_slow == 1);
    CHECK(config.blocks_per_item == 3);
    CHECK(config.zero_row_ends);
    CHECK(config.launch_bounds == 128);
    CHECK(to_policy_order(mapping, config.tile) == c.policy_tile);
    CHECK_FALSE(laplacian_config_problem(config, grid, gpu).has_value());
  }
  // Parts keep the three planes an 8 x 1 block reads within a quarter of the L2 (12.5 MiB of
  // 50): 24 MiB at 1024^3, 2 parts.
  const Grid cube = Grid::whole({1024, 1024, 1024}, {0, 0, 0}, {1, 1, 1});
  for (Layout layout : {Layout::right, Layout::left})
    CHECK(default_laplacian_kernel(gpu, layout, resolve_mapping(layout, IterOrder::automatic, true),
                                   cube, 8)
              .parts == 2);
}

TEST_CASE(
    "the GPU default for float: 4 x 2 blocks, 3 per item in layout right, 8 x 1, 4 per "
    "item in layout left, short rows too",
    "[laplacian]") {
  const ExecLimits gpu = h100_limits();
  const Grid cube = Grid::whole({512, 512, 512}, {0, 0, 0}, {1, 1, 1});
  const Grid short_rows = Grid::whole({64, 2048, 4096}, {0, 0, 0}, {1, 1, 1});
  struct Case {
    Layout layout;
    const Grid* grid;
    int m, m_slow, blocks_per_item;
  };
  const Case cases[] = {{Layout::right, &cube, 4, 2, 3},
                        {Layout::left, &cube, 8, 1, 4},
                        {Layout::left, &short_rows, 8, 1, 4}};
  for (const auto& c : cases) {
    const Mapping mapping = resolve_mapping(c.layout, IterOrder::automatic, true);
    const auto config = default_laplacian_kernel(gpu, c.layout, mapping, *c.grid, 4);
    INFO(format_triple(c.grid->points) << " " << to_string(c.layout));
    CHECK(config.variant == LaplacianVariant::subdomain);
    CHECK(config.m == c.m);
    CHECK(config.m_slow == c.m_slow);
    CHECK(config.blocks_per_item == c.blocks_per_item);
    CHECK(config.streaming_stores);
    CHECK_FALSE(laplacian_config_problem(config, *c.grid, gpu).has_value());
  }
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
