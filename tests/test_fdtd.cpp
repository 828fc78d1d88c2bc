// FDTD: discrete cavity modes, convergence, energy, invariance across configurations, geometry.
#include <algorithm>
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/streams.hpp"
#include "core/deck.hpp"
#include "fdtd/fdtd.hpp"
#include "fdtd/fdtd_deck.hpp"
#include "fdtd/fdtd_run.hpp"
#include "fdtd/reference.hpp"
#include "limits.hpp"

using namespace kstencil;

namespace {

FdtdProblem cavity_problem(Index3 cells, Real3 spacing, std::array<int, 3> mode) {
  FdtdProblem p;
  p.cells = cells;
  p.spacing = spacing;
  p.origin = {0.25, -1.0, 3.0};  // the mode is defined relative to the domain, not the origin
  p.courant = 0.9;
  p.cavity = CavityMode{mode};
  return p;
}

// max |E - cos(omega n dt) E_mode| over all three E components.
template <class T, class L>
double mode_error(const YeeSolver<T, L>& solver, const CavityModeShape& shape, double omega,
                  bool continuous_amplitude = false) {
  const FdtdProblem& p = solver.problem();
  const double phase = std::cos(omega * solver.time());
  double error = 0;
  for (int c = 0; c < 3; ++c) {
    const auto values = solver.component_host(c);
    const Index3 dims = component_dims(p, c);
    std::size_t n = 0;
    for (Index k = 0; k < dims[2]; ++k)
      for (Index j = 0; j < dims[1]; ++j)
        for (Index i = 0; i < dims[0]; ++i, ++n)
          error =
              std::max(error, std::abs(values[n] - phase * cavity_mode_e(p, shape, c, {i, j, k},
                                                                         continuous_amplitude)));
  }
  return error;
}

// The host's limits, or the host's with gpu set: the GPU's policy order, run on the host.
ExecLimits limits_with_mapping(bool gpu_mapping) {
  ExecLimits limits = default_exec_limits();
  limits.gpu = gpu_mapping;
  return limits;
}

// The plan of `c` for fields of layout L.
template <class L>
FdtdPlan plan_for(const FdtdProblem& p, FdtdKernelConfig c = {}, bool gpu_mapping = false) {
  c.layout = layout_of<L>();
  return plan_fdtd(c, p, limits_with_mapping(gpu_mapping));
}

std::vector<FdtdKernelConfig> configs() {
  std::vector<FdtdKernelConfig> out;
  const std::array<std::int64_t, 3> cell_tiles[] = {{0, 0, 0}, {4, 4, 4}, {1, 3, 7}};
  const std::array<std::int64_t, 3> column_tiles[] = {{0, 0, 0}, {8, 2, 1}, {3, 5, 1}};
  // Line tiles count planes along the slowest axis (x or z) and rows along y.
  const std::array<std::int64_t, 3> line_tiles[] = {{0, 0, 0}, {2, 3, 2}, {5, 1, 5}, {1, 9, 1}};
  for (IterOrder order : {IterOrder::left, IterOrder::right, IterOrder::automatic})
    for (const auto& tile : cell_tiles)
      for (int bound : {0, 128}) {
        FdtdKernelConfig c;
        c.variant = FdtdVariant::cell;
        c.iterate = order;
        c.tile = tile;
        c.launch_bounds = bound;
        out.push_back(c);
      }
  // Pairs: the contiguous axis' tile entry counts pairs of cells.
  for (IterOrder order : {IterOrder::left, IterOrder::right, IterOrder::automatic})
    for (const auto& tile : cell_tiles) {
      FdtdKernelConfig c;
      c.variant = FdtdVariant::pairs;
      c.iterate = order;
      c.tile = tile;
      out.push_back(c);
    }
  for (const auto& tile : column_tiles) {
    FdtdKernelConfig c;
    c.variant = FdtdVariant::column;
    c.tile = tile;
    out.push_back(c);
  }
  for (const auto& tile : line_tiles) {
    FdtdKernelConfig c;
    c.variant = FdtdVariant::line;
    c.tile = tile;
    out.push_back(c);
  }
  // Fused: tiles of one plane or one row (every H row a face), uneven ones, and one tile.
  const std::array<std::int64_t, 3> fused_tiles[] = {{0, 0, 0}, {2, 3, 2}, {5, 1, 5},
                                                     {1, 9, 1}, {4, 2, 4}, {13, 9, 11}};
  for (const auto& tile : fused_tiles) {
    FdtdKernelConfig c;
    c.variant = FdtdVariant::fused;
    c.tile = tile;
    out.push_back(c);
  }
  return out;
}

std::string describe(const FdtdPlan& plan) {
  const FdtdKernelConfig& c = plan.config;
  return to_string(c.variant) + " " + plan.describe() + " tile " + format_triple(c.tile) +
         " bounds " + std::to_string(c.launch_bounds);
}

// A problem with every feature: per-cell media with a lossy dielectric block, a point source.
FdtdProblem busy_problem() {
  FdtdProblem p;
  p.cells = {13, 9, 11};
  p.spacing = {0.1, 0.12, 0.09};
  p.courant = 0.7;
  p.media.mode = MediaMode::arrays;
  p.media.background = {1.0, 1.0, 0.0};
  p.media.has_block = true;
  p.media.block_lo = {0.3, 0.2, 0.1};
  p.media.block_hi = {0.9, 0.8, 0.7};
  p.media.block = {2.5, 1.5, 0.3};
  PointSource s;
  s.component = 1;
  s.index = *source_index(p, 1, {0.5, 0.5, 0.5});
  s.frequency = 1.5;
  s.delay = 0.5;
  s.width = 0.2;
  p.source = s;
  return p;
}

// Every component of two solvers' states, bitwise.
template <class A, class B>
void check_same_state(const A& a, const B& b) {
  for (int c = 0; c < 6; ++c) {
    INFO("component " << c);
    CHECK(a.component_host(c) == b.component_host(c));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("cavity modes evolve as the discrete analytic solution to rounding error",
                   "[fdtd]", double, float) {
  using T = TestType;
  const double eps = std::numeric_limits<T>::epsilon();
  const int steps = 200;
  const std::array<int, 3> modes[] = {{1, 1, 0}, {2, 1, 1}, {0, 1, 3}};
  for (const auto& mode : modes)
    for (Layout layout : {Layout::left, Layout::right}) {
      const FdtdProblem p = cavity_problem({12, 10, 14}, {0.1, 0.07, 0.05}, mode);
      const auto shape = cavity_mode_shape(p, *p.cavity);
      double error = 0;
      if (layout == Layout::left) {
        YeeSolver<T, Kokkos::LayoutLeft> solver(p, plan_for<Kokkos::LayoutLeft>(p));
        solver.run(steps);
        error = mode_error(solver, shape, shape.omega_discrete);
      } else {
        YeeSolver<T, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
        solver.run(steps);
        error = mode_error(solver, shape, shape.omega_discrete);
      }
      // |E| <= 1; every step rounds each value a few times, so the error grows at most linearly:
      // 20 (N + 1) eps is a bound with a margin, and 1e4 times below the continuous-mode error.
      INFO("mode " << mode[0] << mode[1] << mode[2] << " layout " << to_string(layout));
      CHECK(error <= 20.0 * (steps + 1) * eps);
    }
}

TEMPLATE_TEST_CASE("the initial cavity field is the mode's shape bitwise in both layouts", "[fdtd]",
                   Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  // E^0 is filled on the device from per-axis factors; cavity_mode_e evaluates the shape point by
  // point. Zero on walls and off the lattice, the same double products elsewhere.
  const std::array<int, 3> modes[] = {{1, 1, 0}, {2, 1, 1}, {0, 1, 3}};
  for (const auto& mode : modes) {
    const FdtdProblem p = cavity_problem({12, 10, 14}, {0.1, 0.07, 0.05}, mode);
    const auto shape = cavity_mode_shape(p, *p.cavity);
    const YeeSolver<double, TestType> solver(p, plan_for<TestType>(p));
    std::size_t differ = 0, nonzero = 0;
    for (int c = 0; c < 3; ++c) {
      const auto values = solver.component_host(c);
      const CavityModeFactors factors = cavity_mode_factors(p, shape, c);
      const Index3 dims = component_dims(p, c);
      std::size_t n = 0;
      for (Index k = 0; k < dims[2]; ++k)
        for (Index j = 0; j < dims[1]; ++j)
          for (Index i = 0; i < dims[0]; ++i, ++n) {
            const double want = cavity_mode_e(p, shape, c, {i, j, k});
            const double tabulated = factors.at({i, j, k});
            differ += std::memcmp(&values[n], &want, sizeof want) != 0;
            differ += std::memcmp(&tabulated, &want, sizeof want) != 0;
            nonzero += want != 0;
          }
    }
    INFO("mode " << mode[0] << mode[1] << mode[2]);
    CHECK(differ == 0);
    CHECK(nonzero > 0);
  }
}

TEST_CASE("a cavity filled with eps, mu != 1 evolves as its own discrete mode, in both media modes",
          "[fdtd]") {
  // The mode's frequency follows from eps and mu on paper (cavity_mode_shape); the kernels read
  // them through cb = dt/eps and db = dt/mu (scalars, or per-cell arrays): a wrong coefficient
  // changes the frequency, which the vacuum mode's frequency shows is far outside the bound.
  for (MediaMode mode : {MediaMode::uniform, MediaMode::arrays}) {
    FdtdProblem p = cavity_problem({12, 10, 14}, {0.1, 0.07, 0.05}, {2, 1, 1});
    p.media.mode = mode;
    p.media.background = {2.25, 1.7, 0.0};
    const auto shape = cavity_mode_shape(p, *p.cavity);
    YeeSolver<double, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
    solver.run(200);
    INFO("media mode " << to_string(mode));
    CHECK(mode_error(solver, shape, shape.omega_discrete) <= 20.0 * 201 * 2.3e-16);
    FdtdProblem vacuum = p;
    vacuum.media.background = {1.0, 1.0, 0.0};
    CHECK(std::abs(cavity_mode_shape(vacuum, *p.cavity).omega_discrete - shape.omega_discrete) >
          0.3 * shape.omega_discrete);
    CHECK(mode_error(solver, shape, 1.01 * shape.omega_discrete) > 1e-3);
  }
}

TEST_CASE("per-cell coefficients follow their definition on both sides of every block face",
          "[fdtd]") {
  // A cell is in the block when its node (origin + index * h) lies in [block_lo, block_hi]; its
  // coefficients follow from eps, mu, sigma and dt on paper: with s = sigma dt / (2 eps),
  // ca = (1 - s) / (1 + s), cb = (dt / eps) / (1 + s), db = dt / mu. The faces lie between nodes,
  // so the cells inside are known by hand: x 3..8, y 2..6, z 2..7 (h = 0.1, 0.12, 0.09).
  FdtdProblem p = busy_problem();
  p.media.block_lo = {0.25, 0.18, 0.13};
  p.media.block_hi = {0.85, 0.79, 0.66};
  const int first[3] = {3, 2, 2}, last[3] = {8, 6, 7}, middle[3] = {5, 4, 4};
  const YeeSolver<double, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
  const auto& f = solver.fields();
  const auto host = [](const auto& field) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  };
  const auto ca = host(f.ca), cb = host(f.cb), db = host(f.db);
  const double dt = solver.dt();
  // The energy's eps and mu: the cell's material as the kernels look it up.
  const auto media =
      fdtd_detail::views_of<double, Kokkos::LayoutRight>(f, p, dt, solver.nodes()).media;
  const auto close = [](double got, double want) {
    return std::abs(got - want) <= 4 * std::numeric_limits<double>::epsilon() * std::abs(want);
  };
  int checked = 0;
  for (int axis = 0; axis < 3; ++axis)
    for (const int at : {first[axis] - 1, first[axis], last[axis], last[axis] + 1}) {
      int index[3] = {middle[0], middle[1], middle[2]};
      index[axis] = at;
      const bool inside = at >= first[axis] && at <= last[axis];
      const Material& m = inside ? p.media.block : p.media.background;
      const double s = m.sigma * dt / (2 * m.eps);
      const int i = index[0], j = index[1], k = index[2];
      INFO("axis " << axis << " index " << at << (inside ? " (block)" : " (background)"));
      CHECK(close(ca(i, j, k), (1 - s) / (1 + s)));
      CHECK(close(cb(i, j, k), (dt / m.eps) / (1 + s)));
      CHECK(close(db(i, j, k), dt / m.mu));
      CHECK(media.at(i, j, k).eps == m.eps);
      CHECK(media.at(i, j, k).mu == m.mu);
      ++checked;
    }
  CHECK(checked == 12);
  CHECK(p.media.block.sigma > 0);  // the loss term is exercised
}

TEMPLATE_TEST_CASE("non-uniform eps and mu: the discrete energy is conserved to rounding", "[fdtd]",
                   double, float) {
  // The energy weighs each cell's E by its eps and H by its mu (looked up as ca, cb, db were
  // filled): it is invariant only if the update's coefficients belong to the same cells.
  using T = TestType;
  FdtdProblem p = cavity_problem({10, 12, 9}, {0.1, 0.1, 0.1}, {1, 2, 1});
  p.media.mode = MediaMode::arrays;
  p.media.background = {1.3, 2.0, 0.0};
  p.media.has_block = true;
  p.media.block_lo = {0.33, 0.2, 0.25};
  p.media.block_hi = {0.71, 0.95, 0.62};
  p.media.block = {3.5, 0.6, 0.0};
  YeeSolver<T, Kokkos::LayoutLeft> solver(p, plan_for<Kokkos::LayoutLeft>(p));
  const int steps = 300;
  std::vector<double> energy;
  for (int n = 0; n < steps; ++n) energy.push_back(solver.step(true)->total());
  double drift = 0;
  for (double w : energy) drift = std::max(drift, std::abs(w - energy.front()) / energy.front());
  INFO("max relative drift " << drift);
  CHECK(drift <= 10.0 * steps * std::numeric_limits<T>::epsilon());
  CHECK(energy.front() > 0);
}

TEST_CASE("the discrete check has teeth: the continuous frequency misses by far more", "[fdtd]") {
  const FdtdProblem p = cavity_problem({12, 10, 14}, {0.1, 0.07, 0.05}, {1, 1, 0});
  const auto shape = cavity_mode_shape(p, *p.cavity);
  YeeSolver<double, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
  solver.run(200);
  CHECK(mode_error(solver, shape, shape.omega_discrete) < 1e-11);
  CHECK(mode_error(solver, shape, shape.omega_continuous) > 1e-3);
  CHECK(shape.omega_discrete < shape.omega_continuous);  // Yee's numerical dispersion: slower
}

TEST_CASE("the cavity mode converges to the continuous one at second order", "[fdtd]") {
  // Mode (1,1,0) of the unit cube (its amplitude is the same for the discrete and continuous
  // modes); the same final time T on grids of 8, 16, 32 cells, dt = 0.5 h / sqrt(3).
  std::vector<double> errors;
  for (Index n : {8, 16, 32}) {
    const double h = 1.0 / n;
    FdtdProblem p = cavity_problem({n, n, n}, {h, h, h}, {1, 1, 0});
    p.courant = 0.5;
    YeeSolver<double, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
    solver.run(4 * n);  // T = 4 n dt = 2 / sqrt(3)
    const auto shape = cavity_mode_shape(p, *p.cavity);
    errors.push_back(mode_error(solver, shape, shape.omega_continuous));
  }
  for (std::size_t r = 1; r < errors.size(); ++r) {
    INFO("errors " << errors[r - 1] << " -> " << errors[r]);
    CHECK(errors[r - 1] / errors[r] > 3.6);
    CHECK(errors[r - 1] / errors[r] < 4.4);
  }
}

TEMPLATE_TEST_CASE("lossless cavity: the discrete energy is conserved to rounding", "[fdtd]",
                   double, float) {
  using T = TestType;
  const double eps = std::numeric_limits<T>::epsilon();
  FdtdProblem p = cavity_problem({10, 12, 9}, {0.1, 0.1, 0.1}, {1, 2, 1});
  // A point source that has died out before the records start makes the state generic.
  PointSource s;
  s.index = *source_index(p, 2, {p.origin[0] + 0.62, p.origin[1] + 0.33, p.origin[2] + 0.41});
  s.frequency = 2;
  s.delay = 0.1;
  s.width = 0.05;
  p.source = s;
  YeeSolver<T, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
  solver.run(50);  // the source is below 1e-30 from here on
  const int steps = 400;
  std::vector<double> energy;
  for (int n = 0; n < steps; ++n) energy.push_back(solver.step(true)->total());
  double drift = 0;
  for (double w : energy) drift = std::max(drift, std::abs(w - energy.front()) / energy.front());
  // W^n is an exact invariant of the scheme; rounding adds O(eps) per step at most: 10 N eps.
  INFO("max relative drift " << drift);
  CHECK(drift <= 10.0 * steps * eps);
  CHECK(energy.front() > 0);
}

TEST_CASE("lossy cavity: energy decays monotonically as exp(-sigma t / eps)", "[fdtd]") {
  FdtdProblem p = cavity_problem({16, 16, 16}, {1.0 / 16, 1.0 / 16, 1.0 / 16}, {1, 1, 0});
  p.media.background = {2.0, 1.0, 0.2};
  YeeSolver<double, Kokkos::LayoutLeft> solver(p, plan_for<Kokkos::LayoutLeft>(p));
  std::vector<EnergyRecord> records;
  while (solver.time() < 20.0) records.push_back(*solver.step(true));
  for (std::size_t n = 1; n < records.size(); ++n)
    REQUIRE(records[n].total() <= records[n - 1].total());
  // dW/dt = -sigma sum |E|^2 = -2 sigma/eps W_E, and W_E averages W/2 over a period.
  const double t = records.back().time;
  const double expected = std::exp(-0.2 * t / 2.0);
  const double ratio = records.back().total() / records.front().total();
  INFO("W(t)/W(0) = " << ratio << ", exp(-sigma t / eps) = " << expected);
  CHECK(std::abs(ratio / expected - 1) < 0.05);
  CHECK(ratio < 0.5);
}

TEMPLATE_TEST_CASE(
    "every variant, layout, iteration order, tile and launch bound agrees bitwise "
    "with the host reference",
    "[fdtd]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  const FdtdProblem p = busy_problem();
  YeeSolver<double, TestType> first(p, plan_for<TestType>(p));
  fdtd_reference::HostYee<double> reference(first);
  reference.run(25);
  std::size_t checked = 0;
  for (bool gpu_mapping : {false, true})
    for (const auto& config : configs()) {
      const FdtdPlan plan = plan_for<TestType>(p, config, gpu_mapping);
      INFO(describe(plan));
      YeeSolver<double, TestType> solver(p, plan);
      solver.run(25);
      for (int c = 0; c < 6; ++c) REQUIRE(solver.component_host(c) == reference.component(c));
      ++checked;
    }
  CHECK(checked == 80);
  // The fields are not trivial: the source drove them, and the block's material shows.
  double largest = 0;
  for (double v : reference.component(1)) largest = std::max(largest, std::abs(v));
  CHECK(largest > 1e-3);
}

namespace {

// A larger busy problem whose every value moves from the first step (a cavity mode under the
// source), so that stale values near a region's cut faces show.
FdtdProblem moving_problem() {
  FdtdProblem p = busy_problem();
  p.cells = {30, 26, 28};
  p.cavity = CavityMode{{2, 1, 1}};
  p.source->index = *source_index(p, 1, {0.5, 0.5, 0.5});
  return p;
}

// `all` (x fastest over `dims`) over `box`.
std::vector<double> part_of_values(const std::vector<double>& all, const Index3& dims,
                                   const Box& box) {
  std::vector<double> out;
  for (Index k = box.lo[2]; k < box.hi[2]; ++k)
    for (Index j = box.lo[1]; j < box.hi[1]; ++j)
      for (Index i = box.lo[0]; i < box.hi[0]; ++i)
        out.push_back(all[static_cast<std::size_t>(i + dims[0] * (j + dims[1] * k))]);
  return out;
}

}  // namespace

TEST_CASE("a host reference over part of the grid matches the whole grid's over its trusted nodes",
          "[fdtd]") {
  const FdtdProblem p = moving_problem();
  const Index3 src = p.source->index;
  YeeSolver<double, Kokkos::LayoutRight> solver(p, plan_for<Kokkos::LayoutRight>(p));
  const Box regions[] = {
      {{9, 7, 8}, {22, 20, 21}},   // cut on every face
      {{0, 0, 0}, {12, 10, 11}},   // a corner's three walls
      {{18, 0, 5}, {31, 27, 20}},  // walls at x high, both y
      Box{src, {src[0] + 1, src[1] + 1, src[2] + 1}}.grown(6).intersect(p.nodes().global())};
  for (int steps : {1, 3, 5}) {
    fdtd_reference::HostYee<double> whole(solver);
    whole.run(steps);
    for (const Box& region : regions) {
      fdtd_reference::HostYee<double> part(solver, region);
      part.run(steps);
      const Box trusted = part.trusted();
      INFO(steps << " steps, region " << format_triple(region.lo) << " - "
                 << format_triple(region.hi) << ", trusted " << format_triple(trusted.lo) << " - "
                 << format_triple(trusted.hi));
      REQUIRE(trusted.size() > 0);
      bool stale = false;
      for (int c = 0; c < 6; ++c) {
        const Index3 dims = component_dims(p, c);
        const Box lattice{{0, 0, 0}, dims};
        const std::vector<double> all = whole.component(c);
        const Box box = trusted.intersect(lattice);
        const auto comparison = part.compare(c, box, part_of_values(all, dims, box));
        CHECK(comparison.mismatches == 0);
        const Box beyond = region.intersect(lattice);
        stale = stale || part.values(c, beyond) != part_of_values(all, dims, beyond);
      }
      // Where the region cuts the grid its faces do go stale: the trusted box is needed.
      CHECK(stale == (region.lo != Index3{0, 0, 0} || region.hi != p.nodes().global().hi));
      // Values outside the trusted nodes are refused.
      CHECK_THROWS_AS(part.compare(0, region, {}), std::invalid_argument);
    }
  }
}

TEST_CASE("a wrong value inside a checked box is found, and only there", "[fdtd]") {
  const FdtdProblem p = moving_problem();
  YeeSolver<float, Kokkos::LayoutLeft> solver(p, plan_for<Kokkos::LayoutLeft>(p));
  const int steps = 3;
  const auto boxes = fdtd_reference::checked_boxes(p, {1, 1, 1}, steps);
  std::vector<fdtd_reference::HostYee<float>> hosts;
  for (const auto& b : boxes) hosts.emplace_back(solver, b.region);
  solver.run(steps);
  // One value of Hz in the middle of the grid, inside one box only.
  const Index3 wrong{15, 13, 14};
  auto hz = Kokkos::subview(solver.fields().h[2], wrong[0], wrong[1], wrong[2]);
  Kokkos::deep_copy(hz, 1.5f);
  std::int64_t mismatches = 0, compared = 0;
  for (std::size_t n = 0; n < boxes.size(); ++n) {
    hosts[n].run(steps);
    for (int c = 0; c < 6; ++c) {
      const Box box = boxes[n].box.intersect(Box{{0, 0, 0}, component_dims(p, c)});
      const auto got =
          fdtd_reference::gather_box(c < 3 ? solver.fields().e[c] : solver.fields().h[c - 3],
                                     solver.nodes(), box, MPI_COMM_SELF);
      mismatches += hosts[n].compare(c, box, got).mismatches;
      compared += box.size();
    }
  }
  CHECK(mismatches == 1);
  CHECK(compared > 0);
}

TEST_CASE("verification's boxes hold the corners of the grid and of every rank's part", "[fdtd]") {
  const FdtdProblem p = moving_problem();
  const Dims3 dims{2, 1, 3};
  const int steps = 3;
  const auto boxes = fdtd_reference::checked_boxes(p, dims, steps);
  // Planes per axis: x {0, 15, 30} and the ranks' boundary 16; y {0, 13, 26}; z {0, 14, 28} and
  // the boundaries 10 and 20; and one box around the source.
  CHECK(boxes.size() == 4 * 3 * 5 + 1);
  const Box whole = p.nodes().global();
  for (const auto& b : boxes) {
    CHECK(b.box.size() > 0);
    CHECK(b.region == b.box.grown(steps + 1).intersect(whole));
  }
  std::size_t corners = 0;
  for (int rank = 0; rank < 6; ++rank) {
    const Box owned = owned_box(whole.hi, dims, coords_of(rank, dims));
    for (int corner = 0; corner < 8; ++corner) {
      Index3 at;
      for (int d = 0; d < 3; ++d) at[d] = (corner >> d & 1) ? owned.hi[d] - 1 : owned.lo[d];
      corners += std::any_of(boxes.begin(), boxes.end(),
                             [&](const auto& b) { return b.box.contains(at); });
    }
  }
  CHECK(corners == 6 * 8);
}

TEST_CASE("verification's cavity mode moves every E component fast where every axis has two cells",
          "[fdtd]") {
  const FdtdProblem problems[] = {cavity_problem({16, 16, 16}, {0.1, 0.1, 0.1}, {1, 1, 0}),
                                  cavity_problem({12, 10, 14}, {0.1, 0.07, 0.05}, {1, 1, 0}),
                                  moving_problem(),
                                  cavity_problem({2, 3, 5}, {1, 1, 1}, {1, 1, 0})};
  for (const FdtdProblem& p : problems) {
    const CavityMode m = cavity_check_mode(p);
    for (int d = 0; d < 3; ++d) {
      // About a quarter of the cells, prime to them (1 on axes of fewer than 8 cells).
      INFO("axis " << d << ": " << p.cells[d] << " cells, mode " << m.mode[d]);
      CHECK(std::gcd(Index(m.mode[d]), p.cells[d]) == 1);
      CHECK(m.mode[d] >= std::max<Index>(1, p.cells[d] / 4 - 3));
      CHECK(m.mode[d] <= std::max<Index>(1, p.cells[d] / 4));
    }
    const CavityModeShape shape = cavity_mode_shape(p, m);
    // On grids of 8 cells or more a step turns the mode by at least 0.3 radians.
    if (p.cells[0] >= 8) CHECK(shape.omega_discrete * p.dt() >= 0.3);
    const Real3& a = shape.amplitude;
    double along = 0, norm = 0;
    for (int d = 0; d < 3; ++d) {
      CHECK(std::abs(a[d]) >= 0.2);
      along += a[d] * shape.kappa[d];
      norm += a[d] * a[d];
    }
    // Orthogonal to kappa (discretely divergence-free) and of length 1, to rounding.
    CHECK(std::abs(along) <=
          1e-13 * std::sqrt(shape.kappa[0] * shape.kappa[0] + shape.kappa[1] * shape.kappa[1] +
                            shape.kappa[2] * shape.kappa[2]));
    CHECK(std::abs(norm - 1) <= 1e-15);
    // An exact eigenvector: 200 steps keep it within the verification's bound.
    FdtdProblem mode = p;
    mode.media = Media{};
    mode.source.reset();
    mode.cavity = m;
    YeeSolver<double, Kokkos::LayoutRight> solver(mode, plan_for<Kokkos::LayoutRight>(mode));
    solver.run(200);
    CHECK(mode_error(solver, shape, shape.omega_discrete) <=
          20.0 * 201 * std::numeric_limits<double>::epsilon());
  }
  // The shape's factors to a few eps whatever the mode number: their angles (up to m pi, 785
  // radians here) are reduced exactly before the sine (long double as the reference). An angle
  // below 2 pi after three roundings (pi, the product, the quotient: eps / 2 relative each) is off
  // by 3 pi eps at most, and the sine adds its own: under 11 eps. Unreduced, about m pi eps.
  const FdtdProblem wide = cavity_problem({1000, 999, 1001}, {1e-3, 1e-3, 1e-3}, {1, 1, 0});
  const CavityModeShape wide_shape = cavity_mode_shape(wide, cavity_check_mode(wide));
  double worst = 0;
  for (int c = 0; c < 3; ++c) {
    const CavityModeFactors f = cavity_mode_factors(wide, wide_shape, c);
    for (int d = 0; d < 3; ++d)
      for (Index i = 1; i < wide.cells[d]; ++i) {
        const bool half = (c == d);  // E_c is staggered along its own axis
        const long double angle = 3.14159265358979323846264338327950288L * wide_shape.mode[d] *
                                  (i + (half ? 0.5L : 0.0L)) / wide.cells[d];
        const long double want = half ? std::cos(angle) : std::sin(angle);
        worst = std::max(worst, static_cast<double>(std::abs(f.factor[d][i] - want)));
      }
  }
  CHECK(worst <= 11 * std::numeric_limits<double>::epsilon());
  FdtdProblem thin = cavity_problem({1, 12, 10}, {0.1, 0.1, 0.1}, {1, 1, 0});
  CHECK(cavity_check_mode(thin).mode == std::array<int, 3>{1, 1, 0});
  CHECK(!cavity_check_mode(thin).polarization);
}

TEMPLATE_TEST_CASE(
    "rows padded to whole pairs or lines, and pairs over ranges that split a pair, "
    "agree bitwise with the host reference",
    "[fdtd]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  constexpr int C = std::is_same<TestType, Kokkos::LayoutRight>::value ? 2 : 0;
  FdtdProblem p = busy_problem();
  p.cells[C] = 12;  // 13 nodes along the contiguous axis: odd, so pairs need padded rows
  YeeSolver<float, TestType> first(p, plan_for<TestType>(p));
  fdtd_reference::HostYee<float> reference(first);
  reference.run(20);
  for (FdtdVariant variant : {FdtdVariant::cell, FdtdVariant::pairs})
    for (int alignment : {1, 2, 3, 16}) {
      FdtdKernelConfig config;
      config.variant = variant;
      FdtdPlan plan = plan_for<TestType>(p, config);
      plan.row_alignment = alignment;
      if (variant == FdtdVariant::pairs && alignment % 2 != 0) continue;
      INFO(to_string(variant) << ", rows in multiples of " << alignment);
      YeeSolver<float, TestType> solver(p, plan);
      const Index rows = (13 + alignment - 1) / alignment * alignment;
      CHECK(Index(solver.fields().e[0].extent(C)) == rows);
      CHECK(Index(solver.fields().h[2].extent(C)) == rows);
      solver.run(20);
      for (int c = 0; c < 6; ++c) REQUIRE(solver.component_host(c) == reference.component(c));
      // The padding is never written.
      const auto ez =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.fields().e[2]);
      for (std::size_t a = 0; a < ez.extent(C == 2 ? 0 : 2); ++a)
        for (std::size_t b = 0; b < ez.extent(1); ++b)
          for (Index c = 13; c < rows; ++c) REQUIRE((C == 2 ? ez(a, b, c) : ez(c, b, a)) == 0.0f);
    }
  // Ranges that begin and end inside a pair (odd bounds along the contiguous axis), updated part
  // by part as an overlapped update does: the same values as the cell variant over the whole.
  p.source.reset();
  p.cavity = CavityMode{{1, 2, 1}};
  FdtdKernelConfig config;
  config.variant = FdtdVariant::pairs;
  config.layout = layout_of<TestType>();
  const ExecLimits limits = limits_with_mapping(false);
  Box lower{{0, 0, 0}, p.cells}, upper = lower, none = lower;
  lower.hi[C] = 5;
  upper.lo[C] = 5;
  // A range of no cells that starts inside a pair (a rank holding one node along the axis).
  none.lo[C] = none.hi[C] = 5;
  const FdtdPlan parts[3] = {plan_fdtd(config, p, lower, limits),
                             plan_fdtd(config, p, upper, limits),
                             plan_fdtd(config, p, none, limits)};
  CHECK(parts[1].launch.loop_start == 5);
  YeeSolver<float, TestType> split(p, plan_fdtd(config, p, limits)),
      cells(p, plan_for<TestType>(p));
  const auto v =
      fdtd_detail::views_of<float, TestType>(split.fields(), p, split.dt(), split.nodes());
  for (int step = 0; step < 20; ++step) {
    for (const FdtdPlan& part : parts)
      fdtd_detail::launch_update("h", part, fdtd_detail::UpdateH<float, TestType, true>{v});
    for (const FdtdPlan& part : parts)
      fdtd_detail::launch_update("e", part, fdtd_detail::UpdateE<float, TestType, true>{v});
  }
  cells.run(20);
  for (int c = 0; c < 6; ++c) REQUIRE(split.component_host(c) == cells.component_host(c));
}

TEST_CASE("uniform coefficients and per-cell arrays of the same material agree bitwise", "[fdtd]") {
  FdtdProblem p = busy_problem();
  p.media.has_block = false;
  p.media.background = {1.7, 1.2, 0.05};
  FdtdProblem uniform = p;
  uniform.media.mode = MediaMode::uniform;
  YeeSolver<float, Kokkos::LayoutRight> a(p, plan_for<Kokkos::LayoutRight>(p)),
      b(uniform, plan_for<Kokkos::LayoutRight>(uniform));
  a.run(30);
  b.run(30);
  check_same_state(a, b);
}

TEMPLATE_TEST_CASE("a solver on another solver's released fields evolves bitwise as on new ones",
                   "[fdtd]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  using Solver = YeeSolver<double, TestType>;
  const FdtdProblem p = busy_problem();  // arrays mode: three fields the spare set lacks
  FdtdProblem mode = cavity_problem(p.cells, p.spacing, {1, 2, 1});
  Solver first(mode, plan_for<TestType>(mode));
  first.run(7);  // fields far from zero
  const double* ex = first.fields().e[0].data();
  Solver reused(p, plan_for<TestType>(p), Decomposition::single(), {}, first.release());
  CHECK(reused.fields().e[0].data() == ex);
  Solver fresh(p, plan_for<TestType>(p));
  reused.run(20);
  fresh.run(20);
  for (int c = 0; c < 6; ++c) CHECK(reused.component_host(c) == fresh.component_host(c));
  // Fields of other extents are not taken (the spare set still lives when the new one is made).
  FdtdProblem larger = p;
  larger.cells = {13, 10, 11};  // along y: the rows' allocated length may round both alike
  const Solver other(larger, plan_for<TestType>(larger), Decomposition::single(), {},
                     reused.release());
  CHECK(other.fields().e[0].data() != ex);
  CHECK(other.fields().e[0].extent(1) == fresh.fields().e[0].extent(1) + 1);
  const auto values = other.component_host(1);
  CHECK(std::all_of(values.begin(), values.end(), [](double v) { return v == 0; }));
}

TEST_CASE("verification hands the run's solver on at its initial state, on its own fields",
          "[fdtd]") {
  using Solver = YeeSolver<double, Kokkos::LayoutRight>;
  // The reference on the cavity check's steps (a benchmark's problem: arrays of the background, no
  // loss, no source) and on steps of its own (a block, a source).
  FdtdProblem bench = cavity_problem({13, 9, 11}, {0.1, 0.12, 0.09}, {2, 1, 1});
  bench.media.mode = MediaMode::arrays;
  for (const FdtdProblem& p : {bench, busy_problem()}) {
    const FdtdPlan plan = plan_for<Kokkos::LayoutRight>(p);
    std::optional<Solver> verified;
    const FdtdVerification v =
        verify_fdtd<double, Kokkos::LayoutRight>(p, plan, Decomposition::single(), {}, &verified);
    INFO("source " << p.source.has_value());
    CHECK(v.passed);
    CHECK(v.reference_values > 0);
    REQUIRE(verified.has_value());
    CHECK(verified->steps_done() == 0);
    Solver fresh(p, plan);
    const auto differs = [&] {
      int components = 0;
      for (int c = 0; c < 6; ++c)
        components += verified->component_host(c) != fresh.component_host(c);
      return components;
    };
    CHECK(differs() == 0);
    verified->run(15);
    CHECK(differs() > 0);  // one has run, the other not
    fresh.run(15);
    CHECK(differs() == 0);
  }
}

TEST_CASE("after reset() a solver runs bitwise as a new one", "[fdtd]") {
  using Solver = YeeSolver<float, Kokkos::LayoutLeft>;
  const FdtdProblem p = busy_problem();
  const FdtdPlan plan = plan_for<Kokkos::LayoutLeft>(p);
  Solver used(p, plan), fresh(p, plan);
  used.run(9);
  used.reset();
  CHECK(used.steps_done() == 0);
  used.run(11);
  fresh.run(11);
  check_same_state(used, fresh);
}

TEMPLATE_TEST_CASE("a solver started from another's state continues it under its own problem",
                   "[fdtd]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  using Solver = YeeSolver<double, TestType>;
  // Without a source, a problem continued from step 5's state is the same problem run on: the
  // same bits after 5 + 7 steps.
  FdtdProblem p = busy_problem();
  p.source.reset();
  p.cavity = CavityMode{{1, 2, 1}, Real3{1, 1, 1}};
  const FdtdPlan plan = plan_for<TestType>(p);
  Solver first(p, plan), whole(p, plan);
  first.run(5);
  whole.run(12);
  const double* ex = first.fields().e[0].data();
  Solver continued(p, plan, Decomposition::single(), {}, first.release(), FdtdStart::storage_state);
  CHECK(continued.fields().e[0].data() == ex);
  CHECK(continued.steps_done() == 0);
  continued.run(7);
  check_same_state(continued, whole);
  // Of other extents, no state to start from.
  FdtdProblem larger = p;
  larger.cells = {13, 10, 11};
  CHECK_THROWS_AS(Solver(larger, plan_for<TestType>(larger), Decomposition::single(), {},
                         continued.release(), FdtdStart::storage_state),
                  std::invalid_argument);
}

TEMPLATE_TEST_CASE("in float the line variant agrees bitwise with the cell variant", "[fdtd]",
                   Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  for (MediaMode mode : {MediaMode::arrays, MediaMode::uniform}) {
    FdtdProblem p = busy_problem();
    p.media.mode = mode;
    p.media.has_block = mode == MediaMode::arrays;
    FdtdKernelConfig line;
    line.variant = FdtdVariant::line;
    line.element_bytes = 4;
    YeeSolver<float, TestType> a(p, plan_for<TestType>(p)), b(p, plan_for<TestType>(p, line));
    a.run(30);
    b.run(30);
    for (int c = 0; c < 6; ++c) CHECK(a.component_host(c) == b.component_host(c));
  }
}

// Rows of several cache lines and a remainder (37 cells along x, 35 along z): the line and fused
// variants' rows run whole chunks (16 floats, 8 doubles) with their prefetches and a remainder,
// after the wall's first cell, or without prefetches (kernel.prefetch = 0) the row in one loop. A
// cavity mode fills every cell from the first step (the source alone would not reach the rows' ends
// in 20 steps).
template <class T, class L>
void check_long_rows_against_cells() {
  for (MediaMode mode : {MediaMode::arrays, MediaMode::uniform})
    for (const Prefetch prefetch : {Prefetch{0, PrefetchInto::l1}, Prefetch{256, PrefetchInto::l1},
                                    Prefetch{default_prefetch_bytes, PrefetchInto::l2},
                                    Prefetch{default_prefetch_bytes, PrefetchInto::both}})
      for (const FdtdVariant variant : {FdtdVariant::line, FdtdVariant::fused}) {
        FdtdProblem p = busy_problem();
        p.cells = {37, 9, 35};
        p.cavity = CavityMode{{2, 1, 1}};
        p.media.mode = mode;
        p.media.has_block = mode == MediaMode::arrays;
        FdtdKernelConfig line, cell;
        line.variant = variant;
        line.prefetch = prefetch;
        line.element_bytes = cell.element_bytes = static_cast<int>(sizeof(T));
        YeeSolver<T, L> a(p, plan_for<L>(p, cell)), b(p, plan_for<L>(p, line));
        a.run(20);
        b.run(20);
        INFO(to_string(variant) << ", " << to_string(mode) << ", " << prefetch_words(prefetch));
        for (int c = 0; c < 6; ++c) CHECK(a.component_host(c) == b.component_host(c));
      }
}

TEMPLATE_TEST_CASE("the line and fused variants' long rows agree bitwise with the cell variant",
                   "[fdtd]", Kokkos::LayoutLeft, Kokkos::LayoutRight) {
  check_long_rows_against_cells<float, TestType>();
  check_long_rows_against_cells<double, TestType>();
}

TEST_CASE("the line variant's host tile: a chunk of planes per thread, rows fitted to its caches",
          "[fdtd]") {
  FdtdProblem p;
  p.cells = {256, 256, 256};
  ExecLimits host;
  host.concurrency = 2;
  host.core_cache_bytes = 1 << 20;
  FdtdKernelConfig c;
  c.variant = FdtdVariant::line;
  // Half of 1 MiB over 8 lines of 256 doubles: 32 rows; 128 planes for each of 2 threads.
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{128, 32, 1});
  c.element_bytes = 4;
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{128, 64, 1});
  // Two coefficient arrays more: 10 lines, 51 rows, so 6 blocks of 43.
  p.media.mode = MediaMode::arrays;
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{128, 43, 1});
  // The last level does not count, on few-core hosts either: 32 rows at 256^3 with a 32 MiB L3
  // on 2 hardware threads (whole planes before: 256 rows), and at 384^3 half of 2 MiB over 8
  // lines of 384 doubles is 42 rows, so 10 blocks of 39.
  p.media.mode = MediaMode::uniform;
  c.element_bytes = 8;
  host.llc_bytes = std::int64_t(32) << 20;
  host.host_hardware_threads = 2;
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{128, 32, 1});
  p.cells = {384, 384, 384};
  host.core_cache_bytes = 2 << 20;
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{192, 39, 1});
  // Nor on a many-core host (16 threads, 2 MiB per core): 10 blocks of 39 again.
  host.host_hardware_threads = host.concurrency = 16;
  host.llc_bytes = std::int64_t(300) << 20;
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{24, 39, 1});
  host.core_cache_bytes = 1 << 20;
  // Fewer planes than threads: the rows are split too, so that every thread has work.
  host.llc_bytes = 0;
  c.element_bytes = 4;
  p.media.mode = MediaMode::arrays;
  p.cells = {4, 256, 256};
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{1, 43, 1});
  p.cells = {2, 64, 256};
  CHECK(plan_fdtd(c, p, host).launch.tile == std::array<std::int64_t, 3>{1, 8, 1});
  // An explicit entry stays; an unknown cache leaves Kokkos' default.
  c.tile = {3, 0, 0};
  CHECK(plan_fdtd(c, p, host).launch.tile[0] == 3);
  host.core_cache_bytes = 0;
  c.tile = {0, 0, 0};
  const FdtdPlan kokkos = plan_fdtd(c, p, host);
  CHECK_FALSE(kokkos.problem);
  CHECK(kokkos.launch.tile[0] >= 1);
}

TEST_CASE("energy records do not change the evolution", "[fdtd]") {
  const FdtdProblem p = busy_problem();
  YeeSolver<double, Kokkos::LayoutRight> plain(p, plan_for<Kokkos::LayoutRight>(p)),
      measured(p, plan_for<Kokkos::LayoutRight>(p));
  for (int n = 0; n < 20; ++n) {
    plain.step(false);
    REQUIRE(measured.step(n % 3 == 0).has_value() == (n % 3 == 0));
  }
  for (int c = 0; c < 6; ++c) CHECK(plain.component_host(c) == measured.component_host(c));
}

TEST_CASE("the plan fills Kokkos' default tile entries once and says why a tile cannot run",
          "[fdtd]") {
  FdtdProblem p;
  p.cells = {20, 12, 8};
  FdtdKernelConfig c;
  c.iterate = IterOrder::left;
  c.tile = {4, 0, 2};
  const FdtdPlan cell = plan_for<Kokkos::LayoutRight>(p, c);
  REQUIRE_FALSE(cell.problem);
  CHECK(cell.describe() == "policy (i,j,k), Iterate::Left");
  CHECK(cell.launch.upper == Index3{20, 12, 8});
  CHECK(cell.launch.tile[0] == 4);
  CHECK(cell.launch.tile[1] >= 1);
  CHECK(cell.launch.tile[2] == 2);
  // Column: policy (z, y) for LayoutRight, each work item a loop along x.
  c.variant = FdtdVariant::column;
  c.tile = {0, 3, 5};
  const FdtdPlan column = plan_for<Kokkos::LayoutRight>(p, c);
  CHECK(column.describe() == "policy (k,j), columns along x");
  CHECK(column.launch.upper == Index3{8, 12, 1});
  CHECK(column.launch.tile == std::array<std::int64_t, 3>{5, 3, 1});
  CHECK(column.launch.loop_length == 20);
  CHECK(column.tile_per_axis() == std::array<std::int64_t, 3>{1, 3, 5});
  // Line: policy (x, y) for LayoutRight, each work item a row along z; LayoutLeft the other way.
  c.variant = FdtdVariant::line;
  c.tile = {2, 3, 0};
  const FdtdPlan line = plan_for<Kokkos::LayoutRight>(p, c);
  CHECK(line.describe() == "policy (i,j), Iterate::Right, rows along z");
  CHECK(line.launch.upper == Index3{20, 12, 1});
  CHECK(line.launch.tile == std::array<std::int64_t, 3>{2, 3, 1});
  CHECK(line.tile_per_axis() == std::array<std::int64_t, 3>{2, 3, 1});
  CHECK(line.launch.loop_start == 0);
  CHECK(line.launch.loop_length == 8);
  const FdtdPlan left = plan_for<Kokkos::LayoutLeft>(p, c);
  CHECK(left.describe() == "policy (k,j), Iterate::Right, rows along x");
  CHECK(left.launch.upper == Index3{8, 12, 1});
  CHECK(left.launch.loop_length == 20);
  // An H100's limits: 32 x 8 x 8 = 2048 threads per block.
  const ExecLimits gpu = h100_limits();
  c.variant = FdtdVariant::cell;
  c.tile = {32, 8, 8};
  const FdtdPlan big = plan_fdtd(c, p, gpu);
  REQUIRE(big.problem);
  CHECK(big.problem->find("2048 threads per block exceed 1024") != std::string::npos);
  CHECK_THROWS_AS((YeeSolver<double, Kokkos::LayoutRight>(p, big)), std::invalid_argument);
  // A plan for other fields: another layout, other cells.
  CHECK_THROWS_AS((YeeSolver<double, Kokkos::LayoutLeft>(p, cell)), std::invalid_argument);
  FdtdProblem other = p;
  other.cells = {20, 12, 9};
  CHECK_THROWS_AS((YeeSolver<double, Kokkos::LayoutRight>(other, cell)), std::invalid_argument);
}

TEST_CASE(
    "the backends' defaults: pairs on rows of whole lines on GPUs, fused on hosts (line with "
    "several ranks)",
    "[fdtd]") {
  for (const char* precision : {"float", "double"})
    for (const char* layout : {"right", "left"}) {
      const Deck deck = Deck::parse(std::string("[run]\nsolver = \"fdtd\"\nprecision = \"") +
                                        precision + "\"\n[grid]\nnx = 256\nny = 256\nnz = 256\n" +
                                        "[kernel]\nlayout = \"" + layout + "\"\n",
                                    "gpu.toml", {}, fdtd_schema());
      INFO(precision << ", layout " << layout);
      const bool right = std::string(layout) == "right";
      const FdtdSetup gpu = fdtd_setup_from_deck(deck, h100_limits());
      CHECK(gpu.plan.config.variant == FdtdVariant::pairs);
      CHECK(gpu.plan.config.launch_bounds == 256);
      CHECK(gpu.plan.tile_per_axis() == (right ? std::array<std::int64_t, 3>{1, 1, 64}
                                               : std::array<std::int64_t, 3>{64, 1, 1}));
      CHECK(gpu.plan.launch.loop_length == 256);  // cells; the policy counts 128 pairs
      CHECK(gpu.plan.launch.upper[0] == 128);
      CHECK(gpu.plan.row_alignment == (std::string(precision) == "float" ? 32 : 16));
      CHECK(gpu.plan.allocated_extents({257, 257, 257})[right ? 2 : 0] ==
            (std::string(precision) == "float" ? 288 : 272));
      CHECK(gpu.plan.config.prefetch.bytes == 0);
      ExecLimits host_limits = limits_with_mapping(false);
      const FdtdSetup host = fdtd_setup_from_deck(deck, host_limits);
      CHECK(host.plan.config.variant == FdtdVariant::fused);
      CHECK(fdtd_setup_from_deck(deck, host_limits, 0, 2).plan.config.variant == FdtdVariant::line);
      CHECK(host.plan.row_alignment == 1);
      // The rows prefetch 2 KiB ahead on AVX hosts whose cores' L1 data cache holds 48 KiB or
      // more (or is unknown), not with 32 KiB.
      for (const std::int64_t l1d : {0, 32 << 10, 48 << 10, 64 << 10}) {
        host_limits.core_l1d_bytes = l1d;
        INFO("L1d " << l1d);
        CHECK(fdtd_setup_from_deck(deck, host_limits).plan.config.prefetch.bytes ==
              (host_prefetch_compiled() && l1d != 32 << 10 ? 2048 : 0));
      }
    }
}

TEST_CASE(
    "kernel.prefetch: the line variant's distance on AVX hosts, refused where nothing "
    "prefetches",
    "[fdtd]") {
  using Catch::Matchers::ContainsSubstring;
  const std::string deck_text = "[run]\nsolver = \"fdtd\"\n[grid]\nnx = 16\nny = 16\nnz = 16\n";
  const auto setup = [&](std::vector<std::string> overrides, const ExecLimits& limits) {
    return fdtd_setup_from_deck(Deck::parse(deck_text, "f.toml", overrides, fdtd_schema()), limits);
  };
  const ExecLimits host = limits_with_mapping(false);
  // 0 everywhere: no software prefetch (none is what GPUs and the other variants do anyway).
  CHECK(setup({"kernel.prefetch=0"}, host).plan.config.prefetch.bytes == 0);
  CHECK(setup({"kernel.prefetch=0"}, h100_limits()).plan.config.prefetch.bytes == 0);
  CHECK(setup({"kernel.variant=\"cell\"", "kernel.prefetch=0"}, host).plan.config.prefetch.bytes ==
        0);
  CHECK(setup({"kernel.variant=\"cell\""}, host).plan.config.prefetch.bytes == 0);
  CHECK_THROWS_WITH(setup({"kernel.variant=\"cell\"", "kernel.prefetch=512"}, host),
                    ContainsSubstring("f.toml: [kernel] prefetch = 512") &&
                        ContainsSubstring("only line and fused prefetch") &&
                        ContainsSubstring("0 or \"auto\" for cell"));
  CHECK_THROWS_WITH(setup({"kernel.prefetch=512"}, h100_limits()),
                    ContainsSubstring("only line and fused prefetch"));
  CHECK_THROWS_WITH(setup({"kernel.prefetch=100"}, host),
                    ContainsSubstring("[kernel] prefetch = 100") &&
                        ContainsSubstring("0, 256, 512, 1024, 2048, 4096"));
  if (host_prefetch_compiled()) {
    CHECK(setup({"kernel.prefetch=512"}, host).plan.config.prefetch.bytes == 512);
    // A cache named in the deck asks for prefetches: 2 KiB ahead by default even where the L1d
    // holds less than 48 KiB (no prefetch there otherwise).
    ExecLimits small_l1 = host;
    small_l1.core_l1d_bytes = 32 << 10;
    CHECK(setup({}, small_l1).plan.config.prefetch.bytes == 0);
    for (const auto& [word, into] :
         {std::pair{"l1", PrefetchInto::l1}, std::pair{"l2", PrefetchInto::l2},
          std::pair{"both", PrefetchInto::both}}) {
      const Prefetch named =
          setup({std::string("kernel.prefetch_into=") + word}, small_l1).plan.config.prefetch;
      CHECK(named.bytes == default_prefetch_bytes);
      CHECK(named.into == into);
    }
    CHECK(setup({"kernel.prefetch=512", "kernel.prefetch_into=l2"}, host)
              .plan.config.prefetch.bytes == 512);
    CHECK_THROWS_WITH(setup({"kernel.prefetch=0", "kernel.prefetch_into=both"}, host),
                      ContainsSubstring("f.toml: [kernel] prefetch_into = \"both\"") &&
                          ContainsSubstring("prefetches nothing"));
  }
  CHECK_THROWS_WITH(setup({"kernel.variant=\"cell\"", "kernel.prefetch_into=l2"}, host),
                    ContainsSubstring("[kernel] prefetch_into") &&
                        ContainsSubstring("only line and fused prefetch") &&
                        ContainsSubstring("\"auto\" for variant cell"));
  CHECK(setup({"kernel.prefetch_into=auto"}, h100_limits()).plan.config.prefetch.bytes == 0);
}

TEST_CASE("kernel.variant = fused: hosts and one rank only, line's tiles and prefetches",
          "[fdtd]") {
  using Catch::Matchers::ContainsSubstring;
  const std::string deck_text = "[run]\nsolver = \"fdtd\"\n[grid]\nnx = 16\nny = 16\nnz = 16\n";
  const Deck deck = Deck::parse(deck_text, "f.toml", {"kernel.variant=\"fused\""}, fdtd_schema());
  const ExecLimits host = limits_with_mapping(false);
  const FdtdSetup fused = fdtd_setup_from_deck(deck, host);
  CHECK(fused.plan.config.variant == FdtdVariant::fused);
  const FdtdSetup line = fdtd_setup_from_deck(
      Deck::parse(deck_text, "f.toml", {"kernel.variant=\"line\""}, fdtd_schema()), host);
  CHECK(fused.plan.launch.tile == line.plan.launch.tile);
  CHECK(fused.plan.config.prefetch.bytes == line.plan.config.prefetch.bytes);
  CHECK_THROWS_WITH(fdtd_setup_from_deck(deck, h100_limits()),
                    ContainsSubstring("f.toml: [kernel] variant = \"fused\"") &&
                        ContainsSubstring("hosts only") && ContainsSubstring("\"line\""));
  CHECK_THROWS_WITH(fdtd_setup_from_deck(deck, host, 0, 2),
                    ContainsSubstring("[kernel] variant = \"fused\"") &&
                        ContainsSubstring("needs one rank") && ContainsSubstring("this run has 2"));
  // A solver made beside a neighbour (no setup in between) refuses the plan too.
  Decomposition beside = Decomposition::single();
  beside.neighbour[0][1] = 0;
  CHECK_THROWS_WITH((YeeSolver<double, Kokkos::LayoutRight>(fused.problem, fused.plan, beside)),
                    ContainsSubstring("beside another rank"));
  CHECK_NOTHROW(
      YeeSolver<double, Kokkos::LayoutRight>(fused.problem, fused.plan, Decomposition::single()));
}

TEST_CASE("staggered geometry: lattices, probes, sources, time step", "[fdtd]") {
  FdtdProblem p;
  p.cells = {4, 5, 6};
  p.spacing = {0.5, 1.0, 2.0};
  p.origin = {1, 2, 3};
  CHECK(component_dims(p, 0) == Index3{4, 6, 7});  // Ex: half cells along x
  CHECK(component_dims(p, 2) == Index3{5, 6, 6});  // Ez
  CHECK(component_dims(p, 3) == Index3{5, 5, 6});  // Hx: half cells along y and z
  CHECK(component_position(p, 0, {0, 0, 0}) == Real3{1.25, 2, 3});
  CHECK(component_position(p, 5, {1, 1, 1}) == Real3{1.75, 3.5, 5});
  // Probes: the nearest lattice point of each component, clamped to the lattice.
  const auto at = probe_indices(p, {1.8, 2.4, 3.1});
  CHECK(at[0] == Index3{1, 0, 0});  // Ex x-lattice at 1.25, 1.75, ...
  CHECK(at[1] == Index3{2, 0, 0});  // Ey x-lattice at 1, 1.5, 2
  CHECK(probe_indices(p, {100, -100, 3})[0] == Index3{3, 0, 0});
  // Sources: inside only; tangential E on a wall moves to the nearest updated value.
  CHECK_FALSE(source_index(p, 2, {0.9, 2, 3}).has_value());
  CHECK_FALSE(source_index(p, 2, {1, 8, 3}).has_value());
  CHECK(source_index(p, 2, {1, 2, 3}) == Index3{1, 1, 0});
  CHECK(source_index(p, 2, {3, 7, 15}) == Index3{3, 4, 5});
  // dt from the Courant number and the fastest medium.
  p.courant = 0.5;
  const double root = std::sqrt(1 / 0.25 + 1.0 + 1 / 4.0);
  CHECK(std::abs(p.dt() - 0.5 / root) < 1e-15);
  p.media.mode = MediaMode::arrays;
  p.media.has_block = true;
  p.media.block = {0.25, 1, 0};  // waves twice as fast in the block
  CHECK(std::abs(p.dt() - 0.25 / root) < 1e-15);
}
