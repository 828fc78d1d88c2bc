#include "jacobi/jacobi_run.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "core/output.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"
#include "poisson/poisson_deck.hpp"
#include "poisson/poisson_output.hpp"

namespace kstencil {

JacobiSetup jacobi_setup_from_deck(const Deck& deck, const ExecLimits& limits) {
  JacobiSetup s;
  s.problem = poisson_problem_from_deck(deck);
  const Grid& grid = s.problem.grid;
  s.stop = {deck.real("jacobi", "tolerance"), deck.integer("jacobi", "max_iterations"),
            static_cast<int>(deck.integer("jacobi", "norm_every"))};
  s.print_every = deck.integer("jacobi", "print_every");
  s.repeats = static_cast<int>(deck.integer("run", "repeats"));
  s.single_precision = deck.string("run", "precision") == "float";

  const Layout layout = parse_layout(deck.string("kernel", "layout"));
  s.requested_variant = deck.string("kernel", "variant");
  s.requested_iterate = deck.string("kernel", "iterate");
  // A 1D grid is contiguous along x in either layout: "auto" iterates it as layout left does.
  const bool one_d = is_collapsed(grid, 1) && is_collapsed(grid, 2);
  const IterOrder order = parse_iter_order(s.requested_iterate);
  const Mapping mapping = resolve_mapping(
      one_d && order == IterOrder::automatic ? Layout::left : layout, order, limits.gpu);
  const NormStrategy norm = parse_norm_strategy(deck.string("jacobi", "norm"));
  if (s.requested_variant == "auto") {
    s.kernel = default_jacobi_kernel(limits, grid, layout, mapping, norm);
  } else {
    s.kernel.layout = layout;
    s.kernel.mapping = mapping;
    s.kernel.tile = deck.integer3("kernel", "tile");
    s.kernel.launch_bounds = static_cast<int>(deck.integer("kernel", "launch_bounds"));
    s.kernel.norm = norm;
  }
  if (auto why = JacobiSolver<double, Kokkos::LayoutRight>::config_problem(grid, s.kernel, limits))
    throw tile_error(deck, limits, *why);
  return s;
}

namespace {

template <class T, class KokkosLayout>
JacobiVerification verify(const JacobiSetup& s) {
  // Two iterations of the configured kernels (norm on both) against the host reference: the
  // iterate bitwise; the error, a sum of N positive squares summed in another order, within the
  // worst-case bound of recursive summation, (N + 2) eps relative (+2: the difference and square).
  JacobiVerification v;
  JacobiSolver<T, KokkosLayout> solver(s.problem, s.kernel);
  std::vector<T> values = solver.solution_host(), next;
  std::vector<T> rhs;
  if (s.problem.rhs) {
    const Grid& g = s.problem.grid;
    rhs.assign(values.size(), T(0));
    std::size_t q = 0;
    for (Index k = 0; k < g.points[2]; ++k)
      for (Index j = 0; j < g.points[1]; ++j)
        for (Index i = 0; i < g.points[0]; ++i, ++q)
          if (!is_boundary(g, {i, j, k})) rhs[q] = static_cast<T>(s.problem.rhs({i, j, k}));
  }
  const double points = point_count(s.problem.grid);
  // Kokkos Kernels forms the difference and sums its squares in T: its bound uses T's epsilon.
  const double epsilon = s.kernel.norm == NormStrategy::kokkos_kernels
                             ? std::numeric_limits<T>::epsilon()
                             : std::numeric_limits<double>::epsilon();
  v.passed = true;
  for (int it = 0; it < 2; ++it) {
    const double error = *solver.iterate(true);
    const double want =
        std::sqrt(jacobi_reference_iteration(s.problem.grid, values, rhs, next) / points);
    values.swap(next);
    v.error_max_relative_diff =
        std::max(v.error_max_relative_diff, std::abs(error - want) / std::max(want, 1e-300));
    v.passed = v.passed && std::abs(error - want) <= (std::max(points, 16.0) + 2) * epsilon * want;
  }
  const auto got = solver.solution_host();
  for (std::size_t q = 0; q < got.size(); ++q) v.mismatches += got[q] != values[q];
  v.passed = v.passed && v.mismatches == 0;
  return v;
}

template <class T, class KokkosLayout>
int run_typed(const JacobiSetup& s, const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  const ExecLimits limits = default_exec_limits();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const RunFolder folder = open_run_folder(deck, deck_path, comm);
  const bool write_output = folder.enabled;
  const std::string& run_name = folder.name;
  const std::filesystem::path& dir = folder.dir;

  const JacobiVerification verification = verify<T, KokkosLayout>(s);

  // The solve, printing as the seed does.
  JacobiSolver<T, KokkosLayout> solver(s.problem, s.kernel);
  const auto start = std::chrono::steady_clock::now();
  const SolveResult result = solver.solve(s.stop, [&](std::int64_t iteration, double error) {
    if (rank == 0 && s.print_every > 0 && iteration % s.print_every == 0)
      std::cout << "Iteration = " << iteration << " error = " << error << std::endl;
  });
  Kokkos::fence();
  const double solve_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) std::cout << (result.converged ? "Success!\n" : "Failure!\n");

  // Time per iteration with and without the norm, on a fresh solver.
  JacobiSolver<T, KokkosLayout> timed(s.problem, s.kernel);
  const Grid& g = s.problem.grid;
  const double points = point_count(g);
  const double bytes = 2 * points * sizeof(T);  // read the old iterate, write the new one
  const SameRunTiming rounds =
      time_with_copy_ceiling(static_cast<std::int64_t>(points), sizeof(T), 2, s.repeats,
                             {[&] { timed.iterate(true); }, [&] { timed.iterate(false); }});
  const TimingStats& with_norm = rounds.launches[0];
  const TimingStats& without_norm = rounds.launches[1];
  const CopyBandwidth& copy = rounds.copy;
  const double norm_share = 1 - without_norm.median_s / with_norm.median_s;
  const std::string precision = s.single_precision ? "float" : "double";

  nlohmann::ordered_json summary = {
      {"kernel", "jacobi"},
      {"variant_requested", s.requested_variant},
      {"layout", to_string(s.kernel.layout)},
      {"iterate", s.requested_iterate},
      {"mapping", s.kernel.mapping.describe()},
      {"tile", s.kernel.tile},
      {"launch_bounds", s.kernel.launch_bounds},
      {"norm", to_string(s.kernel.norm)},
      {"precision", precision},
      {"grid", g.points},
      {"spacing", g.spacing},
      {"tolerance", s.stop.tolerance},
      {"max_iterations", s.stop.max_iterations},
      {"norm_every", s.stop.norm_every},
      {"iterations", result.iterations},
      {"error", result.error},
      {"converged", result.converged},
      {"solve_s", solve_s},
      {"time_per_iteration_s", with_norm.median_s},
      {"time_per_iteration_without_norm_s", without_norm.median_s},
      {"norm_share", norm_share},
      {"effective_gbs", bytes / with_norm.median_s * 1e-9},
      {"effective_gbs_without_norm", bytes / without_norm.median_s * 1e-9},
      {"copy_gbs", copy.gbs},
      {"fom_ratio", bytes / with_norm.median_s * 1e-9 / copy.gbs},
      {"verified", verification.passed},
      {"verification",
       {{"passed", verification.passed},
        {"iterations", 2},
        {"reference_bitwise", verification.mismatches == 0},
        {"error_max_relative_diff", verification.error_max_relative_diff}}},
      {"backend", limits.backend},
      {"device", limits.device_name},
      {"kokkos_version", kokkos_version_string()},
      {"program_version", program_version},
      {"deck", deck_path}};

  std::optional<std::string> plot_problem;
  if (write_output) {
    const auto u = solver.solution_host();
    plot_problem = write_poisson_output(
        deck,
        {dir,
         run_name,
         "jacobi",
         g,
         u.data(),
         s.single_precision,
         &result,
         {{"layout", to_string(s.kernel.layout)}, {"norm", to_string(s.kernel.norm)}},
         summary},
        comm);
  }

  if (rank == 0) {
    std::ostringstream out;
    out << "kstencil " << program_version << " | jacobi | " << limits.backend << " on "
        << limits.device_name << " (Kokkos " << kokkos_version_string() << ")\n"
        << "  grid          " << g.points[0] << " x " << g.points[1] << " x " << g.points[2] << ", "
        << precision << ", layout " << to_string(s.kernel.layout) << ", tile "
        << format_triple(s.kernel.tile) << ", launch bounds "
        << (s.kernel.launch_bounds ? std::to_string(s.kernel.launch_bounds) : "none") << "\n"
        << "  solve         " << result.iterations << " iterations, error "
        << fmt("%.6g", result.error) << (result.converged ? " (converged)" : " (not converged)")
        << ", " << fmt("%.4g", solve_s) << " s\n"
        << "  iteration     " << fmt("%.4g", with_norm.median_s * 1e3) << " ms with the "
        << to_string(s.kernel.norm) << " norm, " << fmt("%.4g", without_norm.median_s * 1e3)
        << " ms without (norm share " << fmt("%.1f", 100 * norm_share) << "%); "
        << fmt("%.1f", bytes / with_norm.median_s * 1e-9) << " GB/s; copy " << fmt("%.1f", copy.gbs)
        << " GB/s\n"
        << "  verification  " << (verification.passed ? "PASS" : "FAIL")
        << " (2 iterations against the host reference: iterate "
        << (verification.mismatches == 0 ? std::string("bitwise equal")
                                         : std::to_string(verification.mismatches) + " differ")
        << ", error within " << fmt("%.2g", verification.error_max_relative_diff) << " relative)\n";
    if (write_output) out << "  output        " << dir.string() << "/\n";
    std::fputs(out.str().c_str(), stdout);
    if (plot_problem)
      std::fprintf(stderr, "kstencil: convergence plot skipped: %s\n", plot_problem->c_str());
    std::fflush(stdout);
  }
  return verification.passed ? 0 : 1;
}

}  // namespace

int run_jacobi_deck(const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  require_one_rank(comm, "Jacobi");
  const JacobiSetup setup = jacobi_setup_from_deck(deck, default_exec_limits());
  return run_with_types(setup.single_precision, setup.kernel.layout, [&](auto types) {
    using Types = decltype(types);
    return run_typed<typename Types::value_type, typename Types::layout>(setup, deck, deck_path,
                                                                         comm);
  });
}

}  // namespace kstencil
