#include "fdtd/fdtd_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "arch/streams.hpp"
#include "core/interrupt.hpp"
#include "core/kernel_traits.hpp"
#include "core/mapping.hpp"
#include "core/memory.hpp"
#include "core/output.hpp"
#include "core/policy.hpp"
#include "core/report.hpp"
#include "core/restart.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "fdtd/fdtd_deck.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

namespace {

const char* const component_names[6] = {"ex", "ey", "ez", "hx", "hy", "hz"};

std::string point_text(const Real3& p) {
  return "[" + fmt("%g", p[0]) + ", " + fmt("%g", p[1]) + ", " + fmt("%g", p[2]) + "]";
}

// The backend's default kernel configuration (variant "auto") for a run of `ranks` ranks.
FdtdKernelConfig default_fdtd_kernel(const ExecLimits& limits, Layout layout, IterOrder iterate,
                                     const int ranks) {
  FdtdKernelConfig config;
  // Hosts: rows through loops the compiler vectorises, in cache-fitted tiles (Kokkos' host
  // MDRange over cells does not vectorise), H and E in one sweep where one rank runs
  // (docs/PERFORMANCE.md, FDTD on hosts).
  config.variant = limits.gpu  ? FdtdVariant::pairs
                   : ranks > 1 ? FdtdVariant::line
                               : FdtdVariant::fused;
  config.layout = layout;
  config.iterate = iterate;
  if (limits.gpu) {
    // Pairs of cells, 64 pairs along the contiguous axis, launch bounds 256: a warp's accesses
    // move two values a thread, far ahead of a cell a work item (docs/PERFORMANCE.md, FDTD).
    config.tile = {1, 1, 1};
    config.tile[resolve_mapping(layout, iterate, limits.gpu).axis_of_policy_dim(0)] = 64;
    config.launch_bounds = 256;
  }
  return config;
}

}  // namespace

FdtdSetup fdtd_setup_from_deck(const Deck& deck, const ExecLimits& limits, const int rank,
                               const int ranks) {
  FdtdSetup s;
  FdtdProblem& p = s.problem;
  p.cells = {deck.integer("grid", "nx"), deck.integer("grid", "ny"), deck.integer("grid", "nz")};
  for (int d = 0; d < 3; ++d)
    if (p.cells[d] >= std::numeric_limits<int>::max() / 2)
      throw deck.error("grid", std::string("n") + "xyz"[d], "too many cells along one axis",
                       "at most " + std::to_string(std::numeric_limits<int>::max() / 2 - 1));
  p.spacing = {deck.real("grid", "hx"), deck.real("grid", "hy"), deck.real("grid", "hz")};
  p.origin = deck.real3("grid", "origin");
  p.courant = deck.real("time", "courant");
  s.steps = deck.integer("time", "steps");
  s.single_precision = deck.string("run", "precision") == "float";

  Media& media = p.media;
  media.mode = parse_media_mode(deck.string("media", "mode"));
  media.background = {deck.real("media", "eps"), deck.real("media", "mu"),
                      deck.real("media", "sigma")};
  media.block_lo = deck.real3("media", "block_lo");
  media.block_hi = deck.real3("media", "block_hi");
  media.block = {deck.real("media", "block_eps"), deck.real("media", "block_mu"),
                 deck.real("media", "block_sigma")};
  media.has_block = true;
  for (int d = 0; d < 3; ++d)
    media.has_block = media.has_block && media.block_hi[d] > media.block_lo[d];
  if (media.has_block && media.mode == MediaMode::uniform)
    throw deck.error("media", "block_hi",
                     "a block of other material needs per-cell coefficients (media.mode)",
                     "media.mode = \"arrays\", or block_hi <= block_lo (no block)");

  if (deck.string("init", "field") == "cavity-mode") {
    const auto mode = deck.integer3("init", "mode");
    int non_zero = 0;
    for (int d = 0; d < 3; ++d) non_zero += mode[d] > 0;
    if (non_zero < 2)
      throw deck.error("init", "mode", "a PEC cavity mode needs at least two non-zero indices",
                       "3 integers >= 0, at least two of them > 0, e.g. [1, 1, 0]");
    // Index n_d or more along an axis of n_d cells vanishes at every node or aliases to a lower
    // mode on the grid.
    for (int d = 0; d < 3; ++d)
      if (mode[d] >= p.cells[d])
        throw deck.error("init", "mode",
                         "index " + std::to_string(mode[d]) + " along " + "xyz"[d] +
                             " is not below the grid's " + std::to_string(p.cells[d]) +
                             " cells along it, where the mode vanishes or aliases to a lower one",
                         "indices below the cells along each axis (grid.nx ny nz = " +
                             format_triple(p.cells) + "), at least two of them > 0");
    p.cavity = CavityMode{{int(mode[0]), int(mode[1]), int(mode[2])}};
  }

  if (deck.string("source", "kind") == "point") {
    PointSource source;
    const std::string component = deck.string("source", "component");
    source.component = component == "ex" ? 0 : component == "ey" ? 1 : 2;
    const Real3 position = deck.real3("source", "position");
    const auto index = source_index(p, source.component, position);
    if (!index) {
      Real3 hi;
      for (int d = 0; d < 3; ++d) hi[d] = p.origin[d] + p.cells[d] * p.spacing[d];
      throw deck.error("source", "position", "outside the domain",
                       "points in " + point_text(p.origin) + " .. " + point_text(hi));
    }
    source.index = *index;
    source.waveform = parse_waveform(deck.string("source", "waveform"));
    source.amplitude = deck.real("source", "amplitude");
    source.frequency = deck.real("source", "frequency");
    source.delay = deck.real("source", "delay");
    source.width = deck.real("source", "width");
    p.source = source;
  }

  s.checkpoint = checkpoint_config_from_deck(deck);
  s.probes = deck.real3_list("diagnostics", "probes");
  for (std::size_t i = 0; i < s.probes.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      const double lo = p.origin[d], hi = lo + p.cells[d] * p.spacing[d];
      if (!(s.probes[i][d] >= lo && s.probes[i][d] <= hi))
        throw deck.error(
            "diagnostics", "probes",
            "probe " + std::to_string(i) + " " + point_text(s.probes[i]) + " is outside the domain",
            "points in " + point_text(p.origin) + " .. " +
                point_text({p.origin[0] + p.cells[0] * p.spacing[0],
                            p.origin[1] + p.cells[1] * p.spacing[1],
                            p.origin[2] + p.cells[2] * p.spacing[2]}));
    }

  const KernelTraits traits = kernel_traits_from_deck(deck);
  s.requested_variant = deck.string("kernel", "variant");
  s.requested_iterate = traits.iterate;
  FdtdKernelConfig kernel;
  if (s.requested_variant == "auto") {
    kernel = default_fdtd_kernel(limits, traits.layout, traits.iterate, ranks);
  } else {
    kernel.variant = parse_fdtd_variant(s.requested_variant);
    kernel.layout = traits.layout;
    kernel.iterate = traits.iterate;
    kernel.tile = traits.tile;
    kernel.launch_bounds = *traits.launch_bounds;
  }
  kernel.element_bytes = s.single_precision ? 4 : 8;
  if (kernel.variant == FdtdVariant::fused && (limits.gpu || ranks > 1))
    throw deck.error("kernel", "variant",
                     limits.gpu ? "fused runs on hosts only (one thread sweeps a tile)"
                                : "fused needs one rank (its updates exchange no ghost layers) "
                                  "and this run has " +
                                      std::to_string(ranks),
                     R"("auto", "cell", "column", "line" or "pairs")");
  const bool prefetches = fdtd_line_prefetches(kernel, limits.gpu);
  const std::optional<PrefetchInto> into = requested_prefetch_into(deck);
  kernel.prefetch.into = into.value_or(PrefetchInto::l1);
  if (deck.is_auto("kernel", "prefetch")) {
    // A cache named in the deck asks for prefetches, whatever the L1d's size.
    kernel.prefetch.bytes = !prefetches ? 0
                            : into      ? default_prefetch_bytes
                                        : fdtd_prefetch_bytes(limits.core_l1d_bytes);
  } else {
    kernel.prefetch.bytes = static_cast<int>(deck.integer("kernel", "prefetch"));
    if (kernel.prefetch.bytes != 0 && !prefetches)
      throw deck.error("kernel", "prefetch",
                       "not valid for variant " + to_string(kernel.variant) +
                           ": only line and fused prefetch, on x86 hosts with AVX",
                       "0 or \"auto\" for " + to_string(kernel.variant));
  }
  check_prefetch_into(deck, kernel.prefetch, prefetches, "variant " + to_string(kernel.variant),
                      "line and fused prefetch");
  s.mpi = mpi_config_from_deck(deck, p.nodes().points, rank, ranks, traits.layout, limits);
  const Grid nodes = s.mpi.local_grid(p.nodes());
  s.plan = plan_fdtd(kernel, p, owned_cells(p, nodes), limits);
  if (s.plan.problem) throw tile_error(deck, limits, *s.plan.problem);
  if (ranks > 1 && s.mpi.overlap) {
    const OverlapSplit split = split_for_overlap(owned_cells(p, nodes), nodes);
    s.overlap_plans.push_back(plan_fdtd(kernel, p, split.interior, limits));
    for (const Box& box : split.shell) s.overlap_plans.push_back(plan_fdtd(kernel, p, box, limits));
    for (const FdtdPlan& part : s.overlap_plans)
      if (part.problem)
        throw tile_error(deck, limits, *part.problem + " (a part of the overlapped update)");
  }
  // The six components (and three coefficient arrays) on rows as the plan allocates them, and the
  // same-run copy's two buffers of half as many values each; on the host, the six components
  // (output); the host reference's boxes are small.
  const double value = s.single_precision ? 4 : 8;
  const double local = static_cast<double>(nodes.allocated.size()) * value;
  const Index3 rows = s.plan.allocated_extents(nodes.local_extents());
  const double field = static_cast<double>(rows[0] * rows[1] * rows[2]) * value;
  const int arrays = fdtd_arrays(media.mode);
  const double host = 6 * local;
  const double device = arrays * (field + local);
  check_memory(deck,
               {device, host, std::max(device, arrays * field + host),
                std::to_string(2 * arrays) + " arrays of the local grid"},
               p.cells, limits);
  return s;
}

namespace {

std::string energy_csv(const std::vector<EnergyRecord>& records) {
  std::ostringstream out;
  out.precision(17);
  out << "step,time,electric,magnetic,total\n";
  for (const auto& r : records)
    out << r.step << "," << r.time << "," << r.electric << "," << r.magnetic << "," << r.total()
        << "\n";
  return out.str();
}

std::string probes_csv(const std::vector<ProbeRecord>& records, const std::vector<Real3>& where) {
  std::ostringstream out;
  out.precision(17);
  out << "step,time,probe,x,y,z,ex,ey,ez,hx,hy,hz\n";
  for (const auto& r : records)
    for (std::size_t p = 0; p < r.values.size(); ++p) {
      out << r.step << "," << r.time << "," << p << "," << where[p][0] << "," << where[p][1] << ","
          << where[p][2];
      for (double v : r.values[p]) out << "," << v;
      out << "\n";
    }
  return out.str();
}

// A figure, or null where the run could not measure it.
nlohmann::ordered_json known_or_null(bool known, double value) {
  return known ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

nlohmann::ordered_json to_json(const FdtdVerification& v) {
  return {{"passed", v.passed},
          {"mode_steps", v.mode_steps},
          {"mode_max_error", v.mode_max_error},
          {"mode_tolerance", v.mode_tolerance},
          {"reference_steps", v.reference_steps},
          {"reference_values", v.reference_values},
          {"reference_bitwise", v.reference_mismatches == 0},
          {"reference_max_diff", v.reference_max_diff}};
}

std::string verification_text(const FdtdVerification& v) {
  return std::string(v.passed ? "PASS" : "FAIL") + " (cavity mode after " +
         std::to_string(v.mode_steps) + " steps: max error " + fmt("%.3g", v.mode_max_error) +
         " <= " + fmt("%.3g", v.mode_tolerance) + "; host reference after " +
         std::to_string(v.reference_steps) + " steps, " + std::to_string(v.reference_values) +
         " values in boxes at the corners, edges, faces and middle: " +
         (v.reference_mismatches == 0
              ? std::string("bitwise equal")
              : std::to_string(v.reference_mismatches) + " values differ, max " +
                    fmt("%.3g", v.reference_max_diff)) +
         ")";
}

// The six components over this rank's part of their lattices (x fastest), as the step files and
// the checkpoints hold them; `values` keeps them.
template <class T, class KokkosLayout>
std::vector<FieldData> component_fields(const YeeSolver<T, KokkosLayout>& solver,
                                        std::vector<std::vector<T>>& values) {
  const FdtdProblem& p = solver.problem();
  values.resize(6);
  std::vector<FieldData> fields;
  for (int c = 0; c < 6; ++c) {
    values[c] = solver.component_host(c);
    const FieldGeometry geometry{component_dims(p, c), component_position(p, c, {0, 0, 0}),
                                 p.spacing, solver.component_box(c)};
    fields.push_back(FieldData{component_names[c], geometry, values[c].data(), sizeof(T) == 4});
  }
  return fields;
}

// The six components at step n, as one step of the series.
template <class T, class KokkosLayout>
void write_step(OutputSeries& series, const YeeSolver<T, KokkosLayout>& solver, std::int64_t n) {
  std::vector<std::vector<T>> values;
  series.write_step(n, n * solver.dt(), component_fields(solver, values));
}

// What the time loop recorded, and the time of its steps without diagnostics or output.
struct FdtdHistory {
  std::vector<EnergyRecord> energy;
  std::vector<ProbeRecord> probes;
  double timed_s = 0;
  std::int64_t timed_steps = 0;
  std::int64_t stopped_at = -1;  // the step a signal stopped the run at (-1: ran to the end)
  std::vector<double> step_s;    // time per step of each timed stretch
};

// A checkpoint's state besides the fields: its time, the diagnostics so far and the steps written.
nlohmann::json fdtd_state(double time, const FdtdHistory& h, const OutputSeries* series) {
  nlohmann::json energy = nlohmann::json::array(), probes = nlohmann::json::array(),
                 steps = nlohmann::json::array();
  for (const EnergyRecord& r : h.energy)
    energy.push_back({r.step, exact_json(r.time), exact_json(r.electric), exact_json(r.magnetic)});
  for (const ProbeRecord& r : h.probes) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& probe : r.values)
      for (const double v : probe) values.push_back(exact_json(v));
    probes.push_back({r.step, exact_json(r.time), values});
  }
  if (series)
    for (const auto& [step, time] : series->steps_written())
      steps.push_back({step, exact_json(time)});
  return {
      {"time", exact_json(time)}, {"energy", energy}, {"probes", probes}, {"output_steps", steps}};
}

// The diagnostics a checkpoint recorded (fdtd_state), to go on with.
FdtdHistory fdtd_history_of(const nlohmann::json& state) {
  FdtdHistory h;
  for (const auto& r : state.at("energy"))
    h.energy.push_back({r.at(0).get<std::int64_t>(), exact_double(r.at(1)), exact_double(r.at(2)),
                        exact_double(r.at(3))});
  for (const auto& r : state.at("probes")) {
    ProbeRecord record{r.at(0).get<std::int64_t>(), exact_double(r.at(1)), {}};
    const auto& values = r.at(2);
    record.values.resize(values.size() / 6);
    for (std::size_t n = 0; n < values.size(); ++n)
      record.values[n / 6][n % 6] = exact_double(values.at(n));
    h.probes.push_back(std::move(record));
  }
  return h;
}

// Steps to s.steps: energy (and probes) every diagnostics.every steps, the fields into `series`
// (if any) every output.every steps and at the end; the stretches between are fenced and timed,
// each followed by one round of the copy ceiling.
// From the solver's step (0, or a checkpoint's) on; `h` holds the diagnostics before it. A
// checkpoint at the deck's cadence, at the end (with a cadence) and when a signal stops the run.
template <class T, class KokkosLayout>
FdtdHistory run_steps(YeeSolver<T, KokkosLayout>& solver, const FdtdSetup& s, const Deck& deck,
                      OutputSeries* series, CheckpointWriter& checkpoints, CopyCeiling& ceiling,
                      FdtdHistory h) {
  std::vector<std::array<Index3, 6>> probe_at;
  for (const auto& position : s.probes) probe_at.push_back(probe_indices(s.problem, position));
  const std::int64_t output_every = deck.integer("output", "every");
  const std::int64_t diagnostics_every = deck.integer("diagnostics", "every");
  const auto output_due = [&](std::int64_t n) {
    return series && ((output_every > 0 && n % output_every == 0) || n == s.steps);
  };
  const auto diagnostics_due = [&](std::int64_t n) {
    return diagnostics_every > 0 && n % diagnostics_every == 0 && n < s.steps;
  };
  // At most 100 steps between the checks for a signal.
  const std::int64_t piece = std::clamp<std::int64_t>((s.steps + 9) / 10, 1, 100);
  Kokkos::Profiling::pushRegion("kstencil::fdtd::steps");
  const MPI_Comm comm = solver.comm();
  const std::int64_t first = solver.steps_done();
  for (std::int64_t n = first;;) {
    const bool stop = n < s.steps && n > first && interrupt_agreed(comm);
    if (output_due(n)) write_step(*series, solver, n);
    const bool last = n == s.steps && n > first && s.checkpoint.every > 0;
    if (checkpoints.due(n, first) || (checkpoints.enabled() && (stop || last))) {
      std::vector<std::vector<T>> values;
      checkpoints.write(n, fdtd_state(n * solver.dt(), h, series),
                        component_fields(solver, values));
    }
    if (n == s.steps) break;
    if (stop) {
      h.stopped_at = n;
      break;
    }
    if (diagnostics_due(n)) {
      if (!probe_at.empty()) h.probes.push_back(solver.probe(probe_at));
      h.energy.push_back(*solver.step(true));
      ++n;
      continue;
    }
    // A stretch without diagnostics or output, cut into pieces of at most a tenth of the run:
    // about ten timed samples however the deck spaces its diagnostics.
    std::int64_t next = n + 1;
    while (next < s.steps && next - n < piece && !diagnostics_due(next) && !output_due(next) &&
           !checkpoints.due(next, first))
      ++next;
    Kokkos::fence();
    const auto start = std::chrono::steady_clock::now();
    solver.run(next - n);
    Kokkos::fence();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    h.timed_s += seconds;
    h.timed_steps += next - n;
    h.step_s.push_back(seconds / static_cast<double>(next - n));
    ceiling.time_round();
    n = next;
  }
  Kokkos::Profiling::popRegion();
  return h;
}

// How fast the steps between diagnostics and output ran, against the ceiling of a copy whose two
// buffers together are as large as the state a step sweeps (6 field arrays, plus 3 coefficient
// arrays in arrays mode), timed between them (and after them, to 10 rounds at least).
template <class T>
void report_performance(RunReport& report, const FdtdProblem& p, CopyCeiling& ceiling,
                        FdtdHistory h, MPI_Comm comm) {
  h.timed_s = global_max(h.timed_s, comm);  // the slowest rank's
  const double cells = static_cast<double>(p.cells[0]) * p.cells[1] * p.cells[2];
  const int values_per_cell = fdtd_values_per_cell(p.media.mode);
  const bool timed = h.timed_steps > 0 && h.timed_s > 0;
  const double mcells = timed ? cells * h.timed_steps / h.timed_s * 1e-6 : 0;
  const double gbs =
      timed ? cells * values_per_cell * sizeof(T) * h.timed_steps / h.timed_s * 1e-9 : 0;
  while (ceiling.rounds() < 10) ceiling.time_round();
  CopyBandwidth copy = ceiling.result();
  const auto copies = global_sums({copy.gbs, copy.kernel_gbs, copy.deep_copy_gbs}, comm);
  copy.gbs = copies[0];
  copy.kernel_gbs = copies[1];
  copy.deep_copy_gbs = copies[2];
  report.fact("values_per_cell", values_per_cell)
      .fact("bytes_per_cell_step", values_per_cell * static_cast<int>(sizeof(T)))
      .fact("timed_steps", h.timed_steps)
      .fact("time_s", h.timed_s)
      .fact("mcells_per_s", known_or_null(timed, mcells))
      .fact("effective_gbs", known_or_null(timed, gbs))
      .fact("copy_gbs", copy.gbs)
      .fact("copy_bytes_per_rank", copy_bytes(copy))
      .fact("copy_kernel_gbs", copy.kernel_gbs)
      .fact("copy_deep_copy_gbs", copy.deep_copy_gbs)
      .fact("fom_ratio", known_or_null(timed, gbs / copy.gbs))
      .timing(slowest_rank(summarize(h.step_s), comm), "step", gbs)
      .line("performance",
            timed ? fmt("%.1f", mcells) + " Mcells/s over " + std::to_string(h.timed_steps) +
                        " timed steps; " + fmt("%.1f", gbs) + " GB/s effective (" +
                        std::to_string(values_per_cell) + " values per cell and step); copy " +
                        fmt("%.1f", copy.gbs) + " GB/s; ratio " + fmt("%.3f", gbs / copy.gbs)
                  : "no step without diagnostics or output to time");
}

// The energy at the first and last diagnostics step, and its largest relative change where that
// means something: without a source (the scheme conserves W^n exactly when lossless).
void report_energy(RunReport& report, const std::vector<EnergyRecord>& energy, bool has_source) {
  const double first = energy.empty() ? 0 : energy.front().total();
  const double last = energy.empty() ? 0 : energy.back().total();
  const bool conserved = !has_source && first > 0;
  double drift = 0;
  for (const auto& r : energy)
    if (conserved) drift = std::max(drift, std::abs(r.total() - first) / first);
  report.fact("energy_first", known_or_null(!energy.empty(), first))
      .fact("energy_last", known_or_null(!energy.empty(), last))
      .fact("energy_max_relative_change", known_or_null(conserved, drift));
  if (!energy.empty())
    report.line("energy", fmt("%.6g", first) + " at step 0 -> " + fmt("%.6g", last) + " at step " +
                              std::to_string(energy.back().step) +
                              (conserved ? " (max relative change " + fmt("%.3g", drift) + ")"
                                         : std::string()));
}

template <class T, class KokkosLayout>
int run_typed(RunTypes<T, KokkosLayout>, const FdtdSetup& s, const Deck& deck,
              const std::string& deck_path, const RunContext& context, const Checkpoint* restart) {
  const MPI_Comm world = context.comm;
  const ExecLimits limits = default_exec_limits();
  Decomposition d = decompose(world, s.mpi.dims, s.mpi.transport);
  MPI_Comm comm = d.comm;
  const RunFolder folder = open_run_folder(deck, deck_path, comm, restart);
  RunReport report("fdtd", limits, d.ranks);
  const bool write_fields = folder.enabled && deck.boolean("output", "fields");
  const FdtdProblem& p = s.problem;
  PhaseClock clock;

  Kokkos::Profiling::pushRegion("kstencil::fdtd::verify");
  std::optional<YeeSolver<T, KokkosLayout>> verified;
  const FdtdVerification verification =
      verify_fdtd<T, KokkosLayout>(p, s.plan, d, s.overlap_plans, &verified);
  Kokkos::Profiling::popRegion();
  clock.end("verification");

  const FdtdKernelConfig& kernel = s.plan.config;
  const std::string variant = to_string(kernel.variant);
  const std::string precision = s.single_precision ? "float" : "double";
  const std::string mapping = s.plan.describe();
  YeeSolver<T, KokkosLayout>& solver = *verified;  // at its initial state
  std::optional<OutputSeries> series;
  if (write_fields)
    series.emplace(folder.dir, folder.name,
                   Attributes{{"kernel", std::string("fdtd")},
                              {"variant", variant},
                              {"layout", to_string(kernel.layout)},
                              {"mapping", mapping},
                              {"precision", precision},
                              {"media", to_string(p.media.mode)},
                              {"cells", p.cells},
                              {"origin", p.origin},
                              {"spacing", p.spacing},
                              {"dt", p.dt()},
                              {"backend", limits.backend},
                              {"kokkos_version", kokkos_version_string()},
                              {"program_version", std::string(program_version)},
                              {"deck", deck.resolved_toml()}},
                   comm);
  FdtdHistory before;
  if (restart) {
    std::vector<std::vector<T>> components;
    for (int c = 0; c < 6; ++c)
      components.push_back(
          restart->read<T>(component_names[c], component_dims(p, c), solver.component_box(c)));
    solver.restore(restart->step(), components);
    before = fdtd_history_of(restart->state());
    if (series) {
      std::vector<std::pair<std::int64_t, double>> steps;
      for (const auto& r : restart->state().at("output_steps"))  // the checkpoint's own is redone
        if (r.at(0).get<std::int64_t>() < restart->step())
          steps.emplace_back(r.at(0).get<std::int64_t>(), exact_double(r.at(1)));
      series->continue_after(steps);
    }
  }
  CheckpointWriter checkpoints(folder.dir, s.checkpoint, "fdtd", deck.resolved_toml(), comm);
  if (series || s.checkpoint.every > 0) {
    // The whole run's files, before its first step: one file holds the six components.
    std::uintmax_t file_bytes = 64 << 10;  // attributes and metadata
    for (int c = 0; c < 6; ++c) {
      const Index3 n = component_dims(p, c);
      file_bytes += static_cast<std::uintmax_t>(n[0] * n[1] * n[2]) * sizeof(T);
    }
    // Steps from `from` to the end that a cadence writes at, the end always (cadence 0: it alone).
    const auto due_from = [&](const std::int64_t from, const std::int64_t cadence) {
      if (from > s.steps) return std::int64_t{0};
      if (cadence <= 0) return std::int64_t{1};
      return s.steps / cadence - (from + cadence - 1) / cadence + 1 +
             (s.steps % cadence != 0 ? 1 : 0);
    };
    const std::int64_t first = solver.steps_done();
    const std::int64_t step_files = series ? due_from(first, deck.integer("output", "every")) : 0;
    // Checkpoints after `first`, of which the newest `keep` stay, and the one being written.
    const std::int64_t due = s.checkpoint.every > 0 ? due_from(first + 1, s.checkpoint.every) : 0;
    const std::int64_t checkpoint_files = due > 0 ? std::min(s.checkpoint.keep, due) + 1 : 0;
    const double bytes =
        static_cast<double>(file_bytes) * static_cast<double>(step_files + checkpoint_files);
    require_free_space(
        folder.dir,
        bytes < 1.8e19 ? static_cast<std::uintmax_t>(bytes)
                       : std::numeric_limits<std::uintmax_t>::max(),
        "the run's " + std::to_string(step_files) + " step files" +
            (checkpoint_files > 0 ? " and " + std::to_string(checkpoint_files) + " checkpoints"
                                  : std::string()),
        "fewer step files (output.every, output.fields = false) or another "
        "output.root",
        comm);
  }
  Kokkos::fence();
  clock.end("set-up");
  // A copy whose two buffers together are as large as the arrays a step sweeps, as the Laplacian's
  // and Jacobi's ceilings have their kernels' footprint. On GPUs two copies a round, fenced once,
  // so that a round moves the state's bytes and a launch and fence cost no larger share of it; a
  // host's copy has no launch to amortise, and one is half the round's time. The copies'
  // verification touched the buffers: a host needs no warm-up round after it, a GPU one. All its
  // time is its phase: its buffers' first touch and its rounds between the steps.
  const std::int64_t state = fdtd_arrays(p.media.mode) * solver.nodes().owned.size();
  CopyCeiling ceiling((state + 1) / 2, sizeof(T), kernels_on_host ? 0 : 1, kernels_on_host ? 1 : 2);
  clock.end("copy ceiling");
  const double ceiling_s = ceiling.seconds();
  const FdtdHistory h = run_steps(solver, s, deck, series ? &*series : nullptr, checkpoints,
                                  ceiling, std::move(before));
  clock.end("steps", "copy ceiling", ceiling.seconds() - ceiling_s);

  report.fact("variant", variant)
      .fact("variant_requested", s.requested_variant)
      .fact("layout", to_string(kernel.layout))
      .fact("iterate", to_string(s.requested_iterate))
      .fact("mapping", mapping)
      .fact("tile", s.plan.tile_per_axis())
      .fact("launch_bounds", kernel.launch_bounds)
      .fact("prefetch", kernel.prefetch.bytes)
      .fact("prefetch_into", to_string(kernel.prefetch.into))
      .fact("row_alignment", s.plan.row_alignment)
      .fact("precision", precision)
      .fact("media", to_string(p.media.mode))
      .fact("cells", p.cells)
      .fact("spacing", p.spacing)
      .fact("courant", p.courant)
      .fact("dt", p.dt())
      .fact("steps", s.steps);
  report
      .line("grid", std::to_string(p.cells[0]) + " x " + std::to_string(p.cells[1]) + " x " +
                        std::to_string(p.cells[2]) + " cells, h = (" + fmt("%g", p.spacing[0]) +
                        ", " + fmt("%g", p.spacing[1]) + ", " + fmt("%g", p.spacing[2]) + "), " +
                        precision + ", media " + to_string(p.media.mode))
      .line("time", std::to_string(s.steps) + " steps of dt = " + fmt("%.6g", p.dt()) +
                        " (Courant " + fmt("%.10g", p.courant) + ")")
      .line(
          "kernel",
          variant + (s.requested_variant == "auto" ? " (auto)" : "") + ", layout " +
              to_string(kernel.layout) + ", " + mapping + ", tile " +
              format_triple(s.plan.tile_per_axis()) + " (x y z), launch bounds " +
              (kernel.launch_bounds ? std::to_string(kernel.launch_bounds) : std::string("none")) +
              (fdtd_line_prefetches(kernel, limits.gpu) ? ", " + prefetch_words(kernel.prefetch)
                                                        : std::string()) +
              (s.plan.row_alignment > 1 ? ", rows allocated in multiples of " +
                                              std::to_string(s.plan.row_alignment) + " values"
                                        : std::string()));
  report_performance<T>(report, p, ceiling, h, comm);
  clock.end("copy ceiling");
  report_energy(report, h.energy, p.source.has_value());
  report.fact("interrupted_at_step",
              h.stopped_at < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(h.stopped_at));
  report_checkpoints(report, restart, checkpoints, "step");
  if (h.stopped_at >= 0)
    report.line(
        "stopped",
        "by a signal at step " + std::to_string(h.stopped_at) + " of " + std::to_string(s.steps) +
            (checkpoints.enabled() ? " (its state in " + checkpoints.last().filename().string() +
                                         ": kstencil run --restart)"
                                   : std::string(" (no run folder)")));
  report.verification(verification.passed, to_json(verification))
      .fact("deck", deck_path)
      .line("verification", verification_text(verification));

  if (deck.integer("diagnostics", "every") > 0) {
    report.file("energy.csv", energy_csv(h.energy));
    if (!s.probes.empty()) report.file("probes.csv", probes_csv(h.probes, s.probes));
    if (deck.boolean("diagnostics", "plot") && !h.energy.empty())
      report.plot({"energy.csv",
                   "energy.png",
                   "time",
                   {"electric", "magnetic", "total"},
                   "FDTD energy (" + folder.name + ")",
                   "time",
                   "energy",
                   false});
  }
  if (folder.enabled)
    report.line("output",
                folder.dir.string() + "/" +
                    (series && !series->steps_written().empty() ? " (" + folder.name + ".xdmf)"
                                                                : std::string()));
  describe_halo(report, {d, s.mpi.overlap, solver.halo_path(), solver.halo_times()});
  report.phases(clock);
  const int status = report.finish(folder, deck, comm, context);
  free_decomposition(d);
  return status;
}

}  // namespace

FdtdSetup agreed_fdtd_setup(const Deck& deck, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return agreed_setup(comm, [&] {
    return fdtd_setup_from_deck(deck, default_exec_limits(), rank, rank_count(comm));
  });
}

void check_fdtd_deck(const Deck& deck, MPI_Comm comm) {
  agreed_fdtd_setup(deck, comm);
}

int run_fdtd_deck(const Deck& deck, const std::string& deck_path, const RunContext& context) {
  const std::optional<Checkpoint> restart =
      open_restart(deck, context, "fdtd", fdtd_schema(), "time", "steps");
  const FdtdSetup setup = agreed_fdtd_setup(deck, context.comm);
  return run_with_types(setup.single_precision, setup.plan.config.layout, [&](auto types) {
    return run_typed(types, setup, deck, deck_path, context, restart ? &*restart : nullptr);
  });
}

}  // namespace kstencil
