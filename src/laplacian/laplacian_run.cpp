#include "laplacian/laplacian_run.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>

#include "core/decomposition.hpp"
#include "core/halo.hpp"
#include "core/interrupt.hpp"
#include "core/kernel_traits.hpp"
#include "core/memory.hpp"
#include "core/output.hpp"
#include "core/report.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

LaplacianSetup laplacian_setup_from_deck(const Deck& deck, const ExecLimits& limits, const int rank,
                                         const int ranks) {
  LaplacianSetup s;
  s.whole = Grid::whole(
      {deck.integer("grid", "nx"), deck.integer("grid", "ny"), deck.integer("grid", "nz")},
      deck.real3("grid", "origin"),
      {deck.real("grid", "hx"), deck.real("grid", "hy"), deck.real("grid", "hz")});
  for (int d = 0; d < 3; ++d)
    if (s.whole.points[d] > std::numeric_limits<int>::max() / 2)
      throw deck.error("grid", std::string("n") + "xyz"[d], "too many points along one axis",
                       "at most " + std::to_string(std::numeric_limits<int>::max() / 2));
  const KernelTraits traits = kernel_traits_from_deck(deck, /*auto_launch_bounds=*/true);
  s.layout = traits.layout;
  s.mpi = mpi_config_from_deck(deck, s.whole.points, rank, ranks, s.layout, limits);
  s.grid = s.mpi.local_grid(s.whole);
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
  request.m_contiguous = optional_int("m_contiguous");
  request.blocks_per_item = optional_int("blocks_per_item");
  request.parts = optional_int("parts");
  request.streaming_stores = deck.boolean("kernel", "streaming_stores");
  request.zero_row_ends = deck.boolean("kernel", "zero_row_ends");
  request.prefetch = optional_int("prefetch");
  request.prefetch_into = requested_prefetch_into(deck);
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
  check_prefetch_into(deck, params.prefetch, line_prefetches(params, limits.gpu),
                      to_string(params.kernel));
  // u and f, the copy's two arrays, the halo check's reference (several ranks); on GPUs the
  // verification's and the output's host copies of two fields.
  const double field = static_cast<double>(s.grid.allocated.size()) * element_bytes;
  const int fields = ranks > 1 ? 5 : 4;
  check_memory(deck,
               {fields * field, 2 * field, fields * field,
                std::to_string(fields) + " fields of " + std::to_string(element_bytes) + " bytes"},
               s.whole.points, limits);
  if (ranks > 1 && s.mpi.overlap) {
    LaplacianKernelParams part = params;
    part.zero_row_ends = false;
    const OverlapSplit split = split_for_overlap(s.plan.box, s.grid);
    for (const Box& box : {split.interior})
      s.overlap_plans.push_back(plan_laplacian(part, s.layout, element_bytes, s.grid, box, limits));
    for (const Box& box : split.shell)
      s.overlap_plans.push_back(plan_laplacian(part, s.layout, element_bytes, s.grid, box, limits));
    for (const LaplacianPlan& p : s.overlap_plans)
      if (p.problem)
        throw tile_error(deck, limits, *p.problem + " (a part of the overlapped update)",
                         p.policy_description());
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
          {"untouched_violations", v.untouched_violations},
          {"step_mismatches", v.step_mismatches < 0 ? nlohmann::ordered_json()
                                                    : nlohmann::ordered_json(v.step_mismatches)}};
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

// The tile in the deck's units (work items per work group along x y z), Kokkos' defaults filled.
std::array<std::int64_t, 3> deck_tile(const LaplacianPlan& plan) {
  std::array<std::int64_t, 3> tile{0, 0, 0};
  if (plan.launch && plan.params.kernel == LaplacianKernel::line) {
    tile = {1, plan.launch->tile[1], 1};
    tile[plan.axes.slow] = plan.launch->tile[0];
  } else if (plan.launch) {
    tile = to_axis_order(plan.mapping, plan.launch->tile);
  }
  return tile;
}

// The run's facts and console lines (rank 0's plan; the times and checks of every rank).
// `timing` and `copy` are nullopt where a signal stopped the timed rounds: no figures then.
void describe_laplacian_run(RunReport& report, const LaplacianSetup& s, const Deck& deck,
                            const std::string& deck_path, const std::optional<TimingStats>& timing,
                            const std::optional<CopyBandwidth>& copy,
                            const LaplacianVerification& v, const ExecLimits& limits) {
  const LaplacianPlan& plan = s.plan;
  const double bytes = laplacian_bytes(s.grid.points, s.single_precision ? 4 : 8);
  const bool timed = timing && copy;
  const double fom = timed ? bytes / timing->median_s * 1e-9 : 0;
  // A figure of summary.json, null where nothing was timed.
  const auto figure = [&](const double value) {
    return timed ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };
  const LaplacianKernelParams& p = plan.params;
  const std::string kernel = to_string(p.kernel);
  const std::string precision = s.single_precision ? "float" : "double";
  const std::array<std::int64_t, 3> tile = deck_tile(plan);
  const std::string iterate = deck.string("kernel", "iterate");

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
      .fact("m_contiguous", p.m_contiguous)
      .fact("blocks_per_item", p.blocks_per_item)
      .fact("parts", p.parts)
      .fact("streaming_stores", p.streaming_stores)
      .fact("zero_row_ends", plan.zeroed_row_end_axis() >= 0)
      .fact("prefetch", p.prefetch.bytes)
      .fact("prefetch_into", to_string(p.prefetch.into))
      .fact("grid", s.grid.points)
      .fact("spacing", s.grid.spacing)
      .fact("precision", precision)
      .fact("field", s.field == TestField::sine ? "sine" : "quadratic")
      .fact("warmup", s.warmup)
      .fact("repeats", s.repeats)
      .fact("time_median_s", figure(timed ? timing->median_s : 0))
      .fact("time_min_s", figure(timed ? timing->min_s : 0))
      .fact("time_max_s", figure(timed ? timing->max_s : 0))
      .fact("bytes", bytes)
      .fact("fom_gbs", figure(fom))
      .fact("copy_gbs", figure(timed ? copy->gbs : 0))
      .fact("copy_bytes_per_rank", figure(timed ? copy_bytes(*copy) : 0))
      .fact("copy_kernel_gbs", figure(timed ? copy->kernel_gbs : 0))
      .fact("copy_deep_copy_gbs", figure(timed ? copy->deep_copy_gbs : 0))
      .fact("fom_ratio", figure(timed ? fom / copy->gbs : 0))
      .fact("interrupted", !timed);
  if (timed) report.timing(*timing, "launch", fom);
  report.fact("deck", deck_path).verification(v.passed, to_json(v));
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
      .line("time", !timed ? std::string("not timed (stopped by a signal)")
                           : "median " + fmt("%.4g", timing->median_s * 1e3) + " ms (min " +
                                 fmt("%.4g", timing->min_s * 1e3) + ", max " +
                                 fmt("%.4g", timing->max_s * 1e3) + ") over " +
                                 std::to_string(s.repeats) + " rounds after " +
                                 std::to_string(s.warmup) +
                                 " warm-up (each round: the kernel, then the two copies)");
  if (timed)
    report.line("FOM", fmt("%.1f", fom) + " GB/s; copy " + fmt("%.1f", copy->gbs) +
                           " GB/s (same run: kernel " + fmt("%.1f", copy->kernel_gbs) +
                           ", deep_copy " + fmt("%.1f", copy->deep_copy_gbs) + "); FOM/copy " +
                           fmt("%.3f", fom / copy->gbs));
  report.line("verification",
              std::string(v.passed ? "PASS" : "FAIL") + " (quadratic max error " +
                  fmt("%.3g", v.quadratic_max_error) + " <= " + fmt("%.3g", v.quadratic_tolerance) +
                  "; reference " +
                  (v.reference_mismatches == 0 ? std::string("bitwise equal")
                                               : "max diff " + fmt("%.3g", v.reference_max_diff) +
                                                     " <= " + fmt("%.3g", v.reference_tolerance)) +
                  "; untouched points " + (v.untouched_violations == 0 ? "ok" : "WRITTEN") +
                  (v.step_mismatches < 0 ? std::string()
                   : v.step_mismatches == 0
                       ? std::string("; timed step with halo bitwise equal")
                       : "; timed step with halo: " + std::to_string(v.step_mismatches) +
                             " points differ") +
                  ")");
}

// The attributes of the HDF5 step file.
Attributes laplacian_attributes(const LaplacianSetup& s, const Deck& deck,
                                const ExecLimits& limits) {
  return {{"kernel", std::string("laplacian")},
          {"variant", to_string(s.plan.params.kernel)},
          {"layout", to_string(s.layout)},
          {"iterate", deck.string("kernel", "iterate")},
          {"tile", deck_tile(s.plan)},
          {"precision", std::string(s.single_precision ? "float" : "double")},
          {"backend", limits.backend},
          {"kokkos_version", kokkos_version_string()},
          {"program_version", std::string(program_version)},
          {"grid_dims", s.grid.points},
          {"origin", s.grid.origin},
          {"spacing", s.grid.spacing},
          {"deck", deck.resolved_toml()}};
}

// One timed step on this rank: the halo exchange of u (several ranks), then f = Laplacian(u); with
// overlap the interior is updated while the faces are in flight, then the shell.
template <class T, class KokkosLayout>
struct LaplacianStep {
  const LaplacianSetup& s;
  HaloExchange<T, KokkosLayout> halo;

  void operator()(const Field<T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
    const Field<const T, KokkosLayout> u_const = u;
    halo.step({u}, static_cast<int>(s.overlap_plans.size()), [&](int part) {
      apply_laplacian<T, KokkosLayout>(part < 0 ? s.plan : s.overlap_plans[part], u_const, f);
    });
  }
};

// The timed step checked against the plan applied to u known everywhere: the ghost layers start as
// NaN, so a face the exchange misses shows. Returns the points that differ (all ranks).
template <class T, class KokkosLayout>
std::int64_t check_step(const LaplacianSetup& s, LaplacianStep<T, KokkosLayout>& step,
                        const Field<T, KokkosLayout>& u, const Field<T, KokkosLayout>& f,
                        MPI_Comm comm) {
  auto f_ref = allocate_field<T, KokkosLayout>("lap_u_reference", s.grid);
  apply_laplacian<T, KokkosLayout>(s.plan, u, f_ref);
  fill_ghost_layers(u, s.grid, std::numeric_limits<T>::quiet_NaN());
  step(u, f);
  const auto a = to_host_x_fastest(f, s.grid, s.grid.owned);
  const auto b = to_host_x_fastest(f_ref, s.grid, s.grid.owned);
  std::int64_t differ = 0;
  for (std::size_t q = 0; q < a.size(); ++q)
    differ += std::memcmp(&a[q], &b[q], sizeof(T)) != 0 ? 1 : 0;
  return static_cast<std::int64_t>(global_sum(static_cast<double>(differ), comm));
}

// The verification of every rank, combined: largest errors, summed counts.
LaplacianVerification combined(LaplacianVerification v, std::int64_t step_mismatches,
                               MPI_Comm comm) {
  v.quadratic_max_error = global_max(v.quadratic_max_error, comm);
  v.quadratic_tolerance = global_max(v.quadratic_tolerance, comm);
  v.reference_max_diff = global_max(v.reference_max_diff, comm);
  v.reference_tolerance = global_max(v.reference_tolerance, comm);
  const auto sums = global_sums(
      {static_cast<double>(v.reference_mismatches), static_cast<double>(v.untouched_violations)},
      comm);
  v.reference_mismatches = static_cast<std::int64_t>(sums[0]);
  v.untouched_violations = static_cast<std::int64_t>(sums[1]);
  v.step_mismatches = step_mismatches;
  v.passed = all_ranks(v.passed, comm) && step_mismatches <= 0;
  return v;
}

template <class T, class KokkosLayout>
int run_typed(const LaplacianSetup& s, const Deck& deck, const std::string& deck_path,
              const RunContext& context) {
  const MPI_Comm world = context.comm;
  const ExecLimits limits = default_exec_limits();
  Decomposition d = decompose(world, s.mpi.dims, s.mpi.transport);
  const RunFolder folder = open_run_folder(deck, deck_path, d.comm);
  const LaplacianPlan& plan = s.plan;

  Kokkos::Profiling::pushRegion("kstencil::laplacian::verify");
  const LaplacianVerification own =
      verify_laplacian<T, KokkosLayout>(plan, s.grid, s.field, corruption_requested(deck));
  auto u = allocate_field<T, KokkosLayout>("u", s.grid);
  auto f = allocate_field<T, KokkosLayout>("lap_u", s.grid);
  fill_test_field(TestFieldSpec::of(s.field, s.grid), s.grid, u);
  LaplacianStep<T, KokkosLayout> step{s, {s.grid, d, HaloSides::both, 1}};
  // One rank times the plan itself: nothing more to check (and no third field to allocate).
  const std::int64_t step_mismatches = d.ranks > 1 ? check_step(s, step, u, f, d.comm) : -1;
  const LaplacianVerification v = combined(own, step_mismatches, d.comm);
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("kstencil::laplacian::timed");
  step.halo.times = HaloTimes{};  // the phases of the timed steps only
  const SameRunTiming timed =
      time_with_copy_ceiling(s.grid.owned.size(), sizeof(T), s.warmup, s.repeats,
                             {[&] { step(u, f); }}, 1, [&] { return interrupt_agreed(d.comm); });
  Kokkos::Profiling::popRegion();
  // Across ranks: the slowest rank's times against the copy of every rank summed (every rank
  // agrees whether the rounds were stopped).
  std::optional<TimingStats> timing;
  std::optional<CopyBandwidth> copy;
  if (!timed.stopped) {
    timing = slowest_rank(timed.launches.front(), d.comm);
    const auto copies =
        global_sums({timed.copy.gbs, timed.copy.kernel_gbs, timed.copy.deep_copy_gbs}, d.comm);
    copy = timed.copy;
    copy->gbs = copies[0];
    copy->kernel_gbs = copies[1];
    copy->deep_copy_gbs = copies[2];
  }

  RunReport report("laplacian", limits, d.ranks);
  describe_laplacian_run(report, s, deck, deck_path, timing, copy, v, limits);
  describe_halo(report, {d, s.mpi.overlap, step.halo.path(), step.halo.times});

  if (folder.enabled && deck.boolean("output", "fields")) {
    OutputSeries series(folder.dir, folder.name, laplacian_attributes(s, deck, limits), d.comm);
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
  const int status = report.finish(folder, deck, d.comm, context);
  free_decomposition(d);
  return status;
}

}  // namespace

LaplacianSetup agreed_laplacian_setup(const Deck& deck, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return agreed_setup(comm, [&] {
    return laplacian_setup_from_deck(deck, default_exec_limits(), rank, rank_count(comm));
  });
}

void check_laplacian_deck(const Deck& deck, MPI_Comm comm) {
  agreed_laplacian_setup(deck, comm);
}

int run_laplacian_deck(const Deck& deck, const std::string& deck_path, const RunContext& context) {
  const LaplacianSetup setup = agreed_laplacian_setup(deck, context.comm);
  return run_with_types(setup.single_precision, setup.layout, [&](auto types) {
    using Types = decltype(types);
    return run_typed<typename Types::value_type, typename Types::layout>(setup, deck, deck_path,
                                                                         context);
  });
}

}  // namespace kstencil
