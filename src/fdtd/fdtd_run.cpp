#include "fdtd/fdtd_run.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "core/output.hpp"
#include "core/plot.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

namespace {

const char* const component_names[6] = {"ex", "ey", "ez", "hx", "hy", "hz"};

std::string point_text(const Real3& p) {
  return "[" + fmt("%g", p[0]) + ", " + fmt("%g", p[1]) + ", " + fmt("%g", p[2]) + "]";
}

// The backend's default kernel configuration (variant "auto").
FdtdKernelConfig default_fdtd_kernel(const ExecLimits& limits, Layout layout,
                                     const Mapping& mapping) {
  FdtdKernelConfig config;
  config.variant = FdtdVariant::cell;
  config.layout = layout;
  config.mapping = mapping;
  if (limits.gpu) {
    // H100, 256^3 cells, double (docs/PERFORMANCE.md, FDTD): 128 work items along the contiguous
    // axis with launch bounds 256 reach 0.87 of the same-run copy in both layouts; 256 x 1 is
    // 0.88/0.85, 128 x 2 0.87/0.85, Kokkos' default tile 0.64/0.67, the column variant 0.52/0.57.
    config.tile = to_axis_order(mapping, std::array<std::int64_t, 3>{128, 1, 1});
    config.launch_bounds = 256;
  }
  return config;
}

}  // namespace

FdtdSetup fdtd_setup_from_deck(const Deck& deck, const ExecLimits& limits) {
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

  const Layout layout = parse_layout(deck.string("kernel", "layout"));
  s.requested_variant = deck.string("kernel", "variant");
  s.requested_iterate = deck.string("kernel", "iterate");
  const Mapping mapping =
      resolve_mapping(layout, parse_iter_order(s.requested_iterate), limits.gpu);
  if (s.requested_variant == "auto") {
    s.kernel = default_fdtd_kernel(limits, layout, mapping);
  } else {
    s.kernel.variant = parse_fdtd_variant(s.requested_variant);
    s.kernel.layout = layout;
    s.kernel.mapping = mapping;
    s.kernel.tile = deck.integer3("kernel", "tile");
    s.kernel.launch_bounds = static_cast<int>(deck.integer("kernel", "launch_bounds"));
  }
  if (auto why = YeeSolver<double, Kokkos::LayoutRight>::config_problem(p, s.kernel, limits))
    throw tile_error(deck, limits, *why);
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

template <class T, class KokkosLayout>
int run_typed(const FdtdSetup& s, const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  const ExecLimits limits = default_exec_limits();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const RunFolder folder = open_run_folder(deck, deck_path, comm);
  const bool write_output = folder.enabled;
  const std::string& run_name = folder.name;
  const std::filesystem::path& dir = folder.dir;
  const bool write_fields = write_output && deck.boolean("output", "fields");

  Kokkos::Profiling::pushRegion("kstencil::fdtd::verify");
  const FdtdVerification verification = verify_fdtd<T, KokkosLayout>(s.problem, s.kernel);
  Kokkos::Profiling::popRegion();

  const FdtdProblem& p = s.problem;
  YeeSolver<T, KokkosLayout> solver(p, s.kernel);
  std::vector<std::array<Index3, 6>> probe_at;
  for (const auto& position : s.probes) probe_at.push_back(probe_indices(p, position));

  const std::string variant = to_string(s.kernel.variant);
  const std::string precision = s.single_precision ? "float" : "double";
  const bool column = s.kernel.variant == FdtdVariant::column;
  const std::string mapping =
      column ? (s.kernel.layout == Layout::right ? "policy (k,j), columns along x"
                                                 : "policy (i,j), columns along z")
             : s.kernel.mapping.describe();
  const Grid nodes = p.nodes();
  const Attributes attributes = {{"kernel", std::string("fdtd")},
                                 {"variant", variant},
                                 {"layout", to_string(s.kernel.layout)},
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
                                 {"deck", deck.resolved_toml()}};
  std::optional<OutputSeries> series;
  if (write_fields) series.emplace(dir, run_name, attributes, comm);
  const auto write_step = [&](std::int64_t n) {
    std::vector<std::vector<T>> values(6);
    std::vector<FieldData> fields;
    for (int c = 0; c < 6; ++c) {
      values[c] = solver.component_host(c);
      const Index3 dims = component_dims(p, c);
      const FieldGeometry geometry{dims, component_position(p, c, {0, 0, 0}), p.spacing,
                                   Box{{0, 0, 0}, dims}};
      fields.push_back(
          FieldData{component_names[c], geometry, values[c].data(), s.single_precision});
    }
    series->write_step(n, n * solver.dt(), fields);
  };

  const std::int64_t output_every = deck.integer("output", "every");
  const std::int64_t diagnostics_every = deck.integer("diagnostics", "every");
  const auto output_due = [&](std::int64_t n) {
    return write_fields && ((output_every > 0 && n % output_every == 0) || n == s.steps);
  };
  const auto diagnostics_due = [&](std::int64_t n) {
    return diagnostics_every > 0 && n % diagnostics_every == 0 && n < s.steps;
  };
  std::vector<EnergyRecord> energy;
  std::vector<ProbeRecord> probes;
  double timed_s = 0;
  std::int64_t timed_steps = 0;
  Kokkos::Profiling::pushRegion("kstencil::fdtd::steps");
  for (std::int64_t n = 0;;) {
    if (output_due(n)) write_step(n);
    if (n == s.steps) break;
    if (diagnostics_due(n)) {
      if (!probe_at.empty()) probes.push_back(solver.probe(probe_at));
      energy.push_back(*solver.step(true));
      ++n;
      continue;
    }
    // Steps without diagnostics or output are timed, in one fenced stretch.
    std::int64_t next = n + 1;
    while (next < s.steps && !diagnostics_due(next) && !output_due(next)) ++next;
    Kokkos::fence();
    const auto start = std::chrono::steady_clock::now();
    solver.run(next - n);
    Kokkos::fence();
    timed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timed_steps += next - n;
    n = next;
  }
  Kokkos::Profiling::popRegion();

  const double cells = static_cast<double>(p.cells[0]) * p.cells[1] * p.cells[2];
  const int values_per_cell = fdtd_values_per_cell(p.media.mode);
  const double bytes_per_step = cells * values_per_cell * sizeof(T);
  const bool timed = timed_steps > 0 && timed_s > 0;
  const double mcells = timed ? cells * timed_steps / timed_s * 1e-6 : 0;
  const double gbs = timed ? bytes_per_step * timed_steps / timed_s * 1e-9 : 0;
  // The ceiling: a copy as large as the state a step sweeps (6 field arrays, plus 3 coefficient
  // arrays in arrays mode), measured in this run.
  const std::int64_t state_arrays = p.media.mode == MediaMode::arrays ? 9 : 6;
  const CopyBandwidth copy = measure_copy_bandwidth(
      state_arrays * nodes.points[0] * nodes.points[1] * nodes.points[2], sizeof(T), 2, 10);
  // Energy drift: meaningful without a source (the scheme conserves W^n exactly when lossless).
  const bool conserved = !p.source && !energy.empty() && energy.front().total() > 0;
  double drift = 0;
  for (const auto& r : energy)
    if (conserved)
      drift =
          std::max(drift, std::abs(r.total() - energy.front().total()) / energy.front().total());

  nlohmann::ordered_json summary = {
      {"kernel", "fdtd"},
      {"variant", variant},
      {"variant_requested", s.requested_variant},
      {"layout", to_string(s.kernel.layout)},
      {"iterate", s.requested_iterate},
      {"mapping", mapping},
      {"tile", s.kernel.tile},
      {"launch_bounds", s.kernel.launch_bounds},
      {"precision", precision},
      {"media", to_string(p.media.mode)},
      {"values_per_cell", values_per_cell},
      {"bytes_per_cell_step", values_per_cell * static_cast<int>(sizeof(T))},
      {"cells", p.cells},
      {"spacing", p.spacing},
      {"courant", p.courant},
      {"dt", p.dt()},
      {"steps", s.steps},
      {"timed_steps", timed_steps},
      {"time_s", timed_s},
      {"mcells_per_s", timed ? nlohmann::json(mcells) : nlohmann::json()},
      {"effective_gbs", timed ? nlohmann::json(gbs) : nlohmann::json()},
      {"copy_gbs", copy.gbs},
      {"copy_kernel_gbs", copy.kernel_gbs},
      {"copy_deep_copy_gbs", copy.deep_copy_gbs},
      {"fom_ratio", timed ? nlohmann::json(gbs / copy.gbs) : nlohmann::json()},
      {"energy_first", energy.empty() ? nlohmann::json() : nlohmann::json(energy.front().total())},
      {"energy_last", energy.empty() ? nlohmann::json() : nlohmann::json(energy.back().total())},
      {"energy_max_relative_change", conserved ? nlohmann::json(drift) : nlohmann::json()},
      {"verified", verification.passed},
      {"verification",
       {{"passed", verification.passed},
        {"mode_steps", verification.mode_steps},
        {"mode_max_error", verification.mode_max_error},
        {"mode_tolerance", verification.mode_tolerance},
        {"reference_steps", verification.reference_steps},
        {"reference_bitwise", verification.reference_mismatches == 0},
        {"reference_max_diff", verification.reference_max_diff}}},
      {"backend", limits.backend},
      {"device", limits.device_name},
      {"concurrency", limits.concurrency},
      {"kokkos_version", kokkos_version_string()},
      {"program_version", program_version},
      {"deck", deck_path}};

  std::optional<std::string> plot_problem;
  if (write_output && rank == 0) {
    write_file_atomically(dir / "deck.toml", deck.resolved_toml());
    if (diagnostics_every > 0) {
      write_file_atomically(dir / "energy.csv", energy_csv(energy));
      if (!s.probes.empty())
        write_file_atomically(dir / "probes.csv", probes_csv(probes, s.probes));
      if (deck.boolean("diagnostics", "plot") && !energy.empty())
        plot_problem = plot_csv({dir / "energy.csv",
                                 dir / "energy.png",
                                 "time",
                                 {"electric", "magnetic", "total"},
                                 "FDTD energy (" + run_name + ")",
                                 "time",
                                 "energy",
                                 false});
    }
    write_file_atomically(dir / "summary.json", summary.dump(2) + "\n");
  }

  if (rank == 0) {
    std::ostringstream out;
    const auto& v = verification;
    out << "kstencil " << program_version << " | fdtd | " << limits.backend << " on "
        << limits.device_name << " (Kokkos " << kokkos_version_string() << ", concurrency "
        << limits.concurrency << ")\n"
        << "  grid          " << p.cells[0] << " x " << p.cells[1] << " x " << p.cells[2]
        << " cells, h = (" << p.spacing[0] << ", " << p.spacing[1] << ", " << p.spacing[2] << "), "
        << precision << ", media " << to_string(p.media.mode) << "\n"
        << "  time          " << s.steps << " steps of dt = " << fmt("%.6g", p.dt()) << " (Courant "
        << p.courant << ")\n"
        << "  kernel        " << variant << (s.requested_variant == "auto" ? " (auto)" : "")
        << ", layout " << to_string(s.kernel.layout) << ", " << mapping << ", tile "
        << format_triple(s.kernel.tile) << " (x y z), launch bounds "
        << (s.kernel.launch_bounds ? std::to_string(s.kernel.launch_bounds) : "none") << "\n";
    if (timed)
      out << "  performance   " << fmt("%.1f", mcells) << " Mcells/s over " << timed_steps
          << " timed steps; " << fmt("%.1f", gbs) << " GB/s effective (" << values_per_cell
          << " values per cell and step); copy " << fmt("%.1f", copy.gbs) << " GB/s; ratio "
          << fmt("%.3f", gbs / copy.gbs) << "\n";
    else
      out << "  performance   no step without diagnostics or output to time\n";
    if (!energy.empty())
      out << "  energy        " << fmt("%.6g", energy.front().total()) << " at step 0 -> "
          << fmt("%.6g", energy.back().total()) << " at step " << energy.back().step
          << (conserved ? " (max relative change " + fmt("%.3g", drift) + ")" : std::string())
          << "\n";
    out << "  verification  " << (v.passed ? "PASS" : "FAIL") << " (cavity mode after "
        << v.mode_steps << " steps: max error " << fmt("%.3g", v.mode_max_error)
        << " <= " << fmt("%.3g", v.mode_tolerance) << "; host reference after " << v.reference_steps
        << " steps: "
        << (v.reference_mismatches == 0
                ? std::string("bitwise equal")
                : std::to_string(v.reference_mismatches) + " values differ, max " +
                      fmt("%.3g", v.reference_max_diff))
        << ")\n";
    if (write_output)
      out << "  output        " << dir.string() << "/"
          << (write_fields ? " (" + run_name + ".xdmf)" : "") << "\n";
    std::fputs(out.str().c_str(), stdout);
    if (plot_problem)
      std::fprintf(stderr, "kstencil: energy plot skipped: %s\n", plot_problem->c_str());
    std::fflush(stdout);
  }
  return verification.passed ? 0 : 1;
}

}  // namespace

int run_fdtd_deck(const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  require_one_rank(comm, "FDTD");
  const FdtdSetup setup = fdtd_setup_from_deck(deck, default_exec_limits());
  return run_with_types(setup.single_precision, setup.kernel.layout, [&](auto types) {
    using Types = decltype(types);
    return run_typed<typename Types::value_type, typename Types::layout>(setup, deck, deck_path,
                                                                         comm);
  });
}

}  // namespace kstencil
