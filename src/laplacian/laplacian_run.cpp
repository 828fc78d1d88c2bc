#include "laplacian/laplacian_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>

#include "core/kernel_traits.hpp"
#include "core/output.hpp"
#include "core/report.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

LaplacianSetup laplacian_setup_from_deck(const Deck& deck, const ExecLimits& limits) {
  LaplacianSetup s;
  s.grid = Grid::whole(
      {deck.integer("grid", "nx"), deck.integer("grid", "ny"), deck.integer("grid", "nz")},
      deck.real3("grid", "origin"),
      {deck.real("grid", "hx"), deck.real("grid", "hy"), deck.real("grid", "hz")});
  for (int d = 0; d < 3; ++d)
    if (s.grid.points[d] > std::numeric_limits<int>::max() / 2)
      throw deck.error("grid", std::string("n") + "xyz"[d], "too many points along one axis",
                       "at most " + std::to_string(std::numeric_limits<int>::max() / 2));
  const KernelTraits traits = kernel_traits_from_deck(deck, /*auto_launch_bounds=*/true);
  s.layout = traits.layout;
  s.single_precision = deck.string("run", "precision") == "float";
  s.requested_variant = deck.string("kernel", "variant");
  s.field = parse_test_field(deck.string("laplacian", "field"));
  s.warmup = static_cast<int>(deck.integer("run", "warmup"));
  s.repeats = static_cast<int>(deck.integer("run", "repeats"));

  LaplacianKernelRequest request;
  request.kernel = parse_laplacian_kernel(s.requested_variant);
  request.iterate = traits.iterate;
  request.tile = traits.tile;
  const auto optional_int = [&](const char* key) -> std::optional<int> {
    if (deck.is_auto("kernel", key)) return std::nullopt;
    return static_cast<int>(deck.integer("kernel", key));
  };
  request.launch_bounds = traits.launch_bounds;
  request.m = optional_int("m");
  request.m_slow = optional_int("m_slow");
  request.blocks_per_item = optional_int("blocks_per_item");
  request.parts = optional_int("parts");
  request.streaming_stores = deck.boolean("kernel", "streaming_stores");
  request.zero_row_ends = deck.boolean("kernel", "zero_row_ends");
  const int element_bytes = s.single_precision ? 4 : 8;
  const LaplacianKernelParams params =
      resolve_laplacian_params(request, limits, s.layout, s.grid, element_bytes);
  s.plan = plan_laplacian(params, s.layout, element_bytes, s.grid, limits);
  if (s.plan.problem) {
    if (s.plan.problem_key != "tile")
      throw deck.error("kernel", s.plan.problem_key,
                       "not valid for kernel " + to_string(params.kernel) + ": " + *s.plan.problem,
                       s.plan.problem_allowed + " for " + to_string(params.kernel));
    if (params.kernel == LaplacianKernel::line && params.tile[s.plan.axes.contiguous] > 1)
      throw deck.error("kernel", "tile", *s.plan.problem,
                       "for line: the contiguous axis' entry 0 or 1, the others work items (0 = "
                       "the default)");
    throw tile_error(deck, limits, *s.plan.problem, s.plan.policy_description());
  }
  return s;
}

nlohmann::ordered_json to_json(const LaplacianVerification& v) {
  return {{"passed", v.passed},
          {"quadratic_max_error", v.quadratic_max_error},
          {"quadratic_tolerance", v.quadratic_tolerance},
          {"reference_max_diff", v.reference_max_diff},
          {"reference_tolerance", v.reference_tolerance},
          {"reference_bitwise", v.reference_mismatches == 0},
          {"reference_mismatches", v.reference_mismatches},
          {"untouched_violations", v.untouched_violations}};
}

namespace {

// Seed 000's figure of merit: the bytes a perfect cache would move (every point read once except
// the 8 corners and the 12 edges' interior points nobody reads, every interior point written).
double laplacian_bytes(const Index3& n, int element_bytes) {
  const double fetch = static_cast<double>(n[0]) * n[1] * n[2] - 8 - 4.0 * (n[0] - 2) -
                       4.0 * (n[1] - 2) - 4.0 * (n[2] - 2);
  const double write = static_cast<double>(n[0] - 2) * (n[1] - 2) * (n[2] - 2);
  return (fetch + write) * element_bytes;
}

template <class T, class KokkosLayout>
int run_typed(const LaplacianSetup& s, const Deck& deck, const std::string& deck_path,
              MPI_Comm comm) {
  const ExecLimits limits = default_exec_limits();
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const RunFolder folder = open_run_folder(deck, deck_path, comm);
  const LaplacianPlan& plan = s.plan;

  Kokkos::Profiling::pushRegion("kstencil::laplacian::verify");
  const LaplacianVerification v = verify_laplacian<T, KokkosLayout>(plan, s.grid, s.field);
  Kokkos::Profiling::popRegion();

  auto u = allocate_field<T, KokkosLayout>("u", s.grid);
  auto f = allocate_field<T, KokkosLayout>("lap_u", s.grid);
  fill_test_field(TestFieldSpec::of(s.field, s.grid), s.grid, u);
  const Field<const T, KokkosLayout> u_const = u;
  Kokkos::Profiling::pushRegion("kstencil::laplacian::timed");
  const SameRunTiming timed = time_with_copy_ceiling(
      s.grid.points[0] * s.grid.points[1] * s.grid.points[2], sizeof(T), s.warmup, s.repeats,
      {[&] { apply_laplacian<T, KokkosLayout>(plan, u_const, f); }});
  Kokkos::Profiling::popRegion();
  const TimingStats& timing = timed.launches.front();
  const CopyBandwidth& copy = timed.copy;
  const double bytes = laplacian_bytes(s.grid.points, sizeof(T));
  const double fom = bytes / timing.median_s * 1e-9;

  const LaplacianKernelParams& p = plan.params;
  const std::string kernel = to_string(p.kernel);
  const std::string precision = s.single_precision ? "float" : "double";
  // The tile in the deck's units (work items per work group along x y z), Kokkos' defaults filled.
  std::array<std::int64_t, 3> tile{0, 0, 0};
  if (plan.launch && p.kernel == LaplacianKernel::line) {
    tile = {1, plan.launch->tile[1], 1};
    tile[plan.axes.slow] = plan.launch->tile[0];
  } else if (plan.launch) {
    tile = to_axis_order(plan.mapping, plan.launch->tile);
  }
  const std::string iterate = deck.string("kernel", "iterate");

  RunReport report("laplacian", limits, ranks);
  report.fact("variant", kernel)
      .fact("variant_requested", s.requested_variant)
      .fact("layout", to_string(s.layout))
      .fact("iterate", iterate)
      .fact("mapping", plan.policy_description())
      .fact("tile", tile)
      .fact("points_per_group", plan.points_per_group())
      .fact("policy_tile", plan.launch ? plan.launch->tile : std::array<std::int64_t, 3>{})
      .fact("launch_bounds", p.launch_bounds)
      .fact("m", p.m)
      .fact("m_slow", p.m_slow)
      .fact("blocks_per_item", p.blocks_per_item)
      .fact("parts", p.parts)
      .fact("streaming_stores", p.streaming_stores)
      .fact("zero_row_ends", plan.zeroed_row_end_axis() >= 0)
      .fact("grid", s.grid.points)
      .fact("spacing", s.grid.spacing)
      .fact("precision", precision)
      .fact("field", s.field == TestField::sine ? "sine" : "quadratic")
      .fact("warmup", s.warmup)
      .fact("repeats", s.repeats)
      .fact("time_median_s", timing.median_s)
      .fact("time_min_s", timing.min_s)
      .fact("time_max_s", timing.max_s)
      .fact("bytes", bytes)
      .fact("fom_gbs", fom)
      .fact("copy_gbs", copy.gbs)
      .fact("copy_kernel_gbs", copy.kernel_gbs)
      .fact("copy_deep_copy_gbs", copy.deep_copy_gbs)
      .fact("fom_ratio", fom / copy.gbs)
      .fact("verified", v.passed)
      .fact("verification", to_json(v))
      .fact("deck", deck_path);
  const Real3& h = s.grid.spacing;
  report
      .line("grid", std::to_string(s.grid.points[0]) + " x " + std::to_string(s.grid.points[1]) +
                        " x " + std::to_string(s.grid.points[2]) + ", h = (" + fmt("%g", h[0]) +
                        ", " + fmt("%g", h[1]) + ", " + fmt("%g", h[2]) + "), " + precision)
      .line("kernel", kernel + (s.requested_variant == "auto" ? " (auto)" : "") + ", layout " +
                          to_string(s.layout) + ", iterate " + iterate + " -> " +
                          plan.policy_description())
      .line("tile", format_triple(tile) + " work items per group (x y z) = " +
                        format_triple(plan.points_per_group()) + " points; " +
                        plan.details(limits.gpu))
      .line("time", "median " + fmt("%.4g", timing.median_s * 1e3) + " ms (min " +
                        fmt("%.4g", timing.min_s * 1e3) + ", max " +
                        fmt("%.4g", timing.max_s * 1e3) + ") over " + std::to_string(s.repeats) +
                        " rounds after " + std::to_string(s.warmup) +
                        " warm-up (each round: the kernel, then the two copies)")
      .line("FOM", fmt("%.1f", fom) + " GB/s; copy " + fmt("%.1f", copy.gbs) +
                       " GB/s (same run: kernel " + fmt("%.1f", copy.kernel_gbs) + ", deep_copy " +
                       fmt("%.1f", copy.deep_copy_gbs) + "); FOM/copy " +
                       fmt("%.3f", fom / copy.gbs))
      .line("verification",
            std::string(v.passed ? "PASS" : "FAIL") + " (quadratic max error " +
                fmt("%.3g", v.quadratic_max_error) + " <= " + fmt("%.3g", v.quadratic_tolerance) +
                "; reference " +
                (v.reference_mismatches == 0 ? std::string("bitwise equal")
                                             : "max diff " + fmt("%.3g", v.reference_max_diff) +
                                                   " <= " + fmt("%.3g", v.reference_tolerance)) +
                "; untouched points " + (v.untouched_violations == 0 ? "ok" : "WRITTEN") + ")");

  if (folder.enabled && deck.boolean("output", "fields")) {
    const Attributes attributes = {{"kernel", std::string("laplacian")},
                                   {"variant", kernel},
                                   {"layout", to_string(s.layout)},
                                   {"iterate", iterate},
                                   {"tile", tile},
                                   {"precision", precision},
                                   {"backend", limits.backend},
                                   {"kokkos_version", kokkos_version_string()},
                                   {"program_version", std::string(program_version)},
                                   {"grid_dims", s.grid.points},
                                   {"origin", s.grid.origin},
                                   {"spacing", s.grid.spacing},
                                   {"deck", deck.resolved_toml()}};
    OutputSeries series(folder.dir, folder.name, attributes, comm);
    const FieldGeometry geometry{s.grid.points, s.grid.origin, s.grid.spacing, s.grid.owned};
    const auto u_host = to_host_x_fastest(u, s.grid, s.grid.owned);
    const auto f_host = to_host_x_fastest(f, s.grid, s.grid.owned);
    series.write_step(0, 0.0,
                      {FieldData{"u", geometry, u_host.data(), s.single_precision},
                       FieldData{"lap_u", geometry, f_host.data(), s.single_precision}});
  }
  if (folder.enabled)
    report.line("output", folder.dir.string() + "/" +
                              (deck.boolean("output", "fields") ? " (" + folder.name + ".xdmf)"
                                                                : std::string()));
  report.finish(folder, deck, comm);
  return v.passed ? 0 : 1;
}

}  // namespace

int run_laplacian_deck(const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  require_one_rank(comm, "Laplacian");
  const LaplacianSetup setup = laplacian_setup_from_deck(deck, default_exec_limits());
  return run_with_types(setup.single_precision, setup.layout, [&](auto types) {
    using Types = decltype(types);
    return run_typed<typename Types::value_type, typename Types::layout>(setup, deck, deck_path,
                                                                         comm);
  });
}

}  // namespace kstencil
