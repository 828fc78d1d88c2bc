#include "cg/cg_run.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/output.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"
#include "poisson/poisson_deck.hpp"
#include "poisson/poisson_output.hpp"

namespace kstencil {

CgSetup cg_setup_from_deck(const Deck& deck, const ExecLimits& limits) {
  CgSetup s;
  s.problem = poisson_problem_from_deck(deck);
  const Grid& grid = s.problem.grid;
  if (point_count(grid) > std::numeric_limits<int>::max())
    throw deck.error("grid", "nx", "CG's matrix has int row indices: too many points",
                     "nx * ny * nz at most " + std::to_string(std::numeric_limits<int>::max()));
  s.stop = {deck.real("cg", "tolerance"), deck.integer("cg", "max_iterations")};
  s.print_every = deck.integer("cg", "print_every");
  s.single_precision = deck.string("run", "precision") == "float";
  s.layout = parse_layout(deck.string("kernel", "layout"));
  const bool one_d = is_collapsed(grid, 1) && is_collapsed(grid, 2);
  s.check_kernel = default_jacobi_kernel(
      limits, grid, s.layout,
      resolve_mapping(one_d ? Layout::left : s.layout, IterOrder::automatic, limits.gpu),
      NormStrategy::reduce);
  return s;
}

namespace {

template <class T, class KokkosLayout>
int run_typed(const CgSetup& s, const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  const ExecLimits limits = default_exec_limits();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const RunFolder folder = open_run_folder(deck, deck_path, comm);
  const bool write_output = folder.enabled;
  const std::string& run_name = folder.name;
  const std::filesystem::path& dir = folder.dir;
  const Grid& g = s.problem.grid;

  const OperatorCheck check = check_operator_against_stencil<T, KokkosLayout>(g, s.check_kernel);
  {  // The first launches of each Kokkos Kernels kernel, outside the timed solve.
    CgSolver<T, KokkosLayout> warm_up(s.problem);
    warm_up.solve({std::numeric_limits<double>::min(), 2});
  }

  CgSolver<T, KokkosLayout> solver(s.problem);
  Kokkos::fence();
  const auto start = std::chrono::steady_clock::now();
  const SolveResult result = solver.solve(s.stop, [&](std::int64_t iteration, double error) {
    if (rank == 0 && s.print_every > 0 && iteration % s.print_every == 0)
      std::cout << "Iteration = " << iteration << " error = " << error << std::endl;
  });
  Kokkos::fence();
  const double solve_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) std::cout << (result.converged ? "Success!\n" : "Failure!\n");
  const auto residual = solver.residual();

  const double per_iteration_s = result.iterations > 0 ? solve_s / result.iterations : 0;
  const double bytes = solver.bytes_per_iteration();
  const CopyBandwidth copy =
      measure_copy_bandwidth(static_cast<std::int64_t>(point_count(g)), sizeof(T), 2, 20);
  const double gbs = per_iteration_s > 0 ? bytes / per_iteration_s * 1e-9 : 0;
  const std::string precision = s.single_precision ? "float" : "double";

  nlohmann::ordered_json summary = {
      {"kernel", "cg"},
      {"layout", to_string(s.layout)},
      {"precision", precision},
      {"grid", g.points},
      {"spacing", g.spacing},
      {"tolerance", s.stop.tolerance},
      {"max_iterations", s.stop.max_iterations},
      {"iterations", result.iterations},
      {"error", result.error},
      {"true_error", residual.error},
      {"relative_residual", residual.relative},
      {"converged", result.converged},
      {"solve_s", solve_s},
      {"time_per_iteration_s", per_iteration_s},
      {"matrix_nonzeros", solver.matrix().nnz()},
      {"bytes_per_iteration", bytes},
      {"effective_gbs", gbs},
      {"copy_gbs", copy.gbs},
      {"fom_ratio", gbs / copy.gbs},
      {"verified", check.passed},
      {"verification",
       {{"passed", check.passed},
        {"check", "spmv of the assembled operator against the Jacobi kernel, random fields"},
        {"max_bound_ratio", check.max_bound_ratio},
        {"violations", check.violations}}},
      {"backend", limits.backend},
      {"device", limits.device_name},
      {"kokkos_version", kokkos_version_string()},
      {"program_version", program_version},
      {"deck", deck_path}};

  std::optional<std::string> plot_problem;
  if (write_output) {
    const auto u = solver.solution_host();
    plot_problem = write_poisson_output(deck,
                                        {dir,
                                         run_name,
                                         "cg",
                                         g,
                                         u.data(),
                                         s.single_precision,
                                         &result,
                                         {{"layout", to_string(s.layout)}},
                                         summary},
                                        comm);
  }

  if (rank == 0) {
    std::ostringstream out;
    out << "kstencil " << program_version << " | cg | " << limits.backend << " on "
        << limits.device_name << " (Kokkos " << kokkos_version_string() << ")\n"
        << "  grid          " << g.points[0] << " x " << g.points[1] << " x " << g.points[2] << ", "
        << precision << ", layout " << to_string(s.layout) << ", " << solver.matrix().nnz()
        << " matrix entries\n"
        << "  solve         " << result.iterations << " iterations, error "
        << fmt("%.6g", result.error) << (result.converged ? " (converged)" : " (not converged)")
        << ", " << fmt("%.4g", solve_s) << " s\n"
        << "  residual      recomputed from u: error " << fmt("%.6g", residual.error)
        << ", ||b - A u|| / ||b|| " << fmt("%.3g", residual.relative) << "\n"
        << "  iteration     " << fmt("%.4g", per_iteration_s * 1e3) << " ms; " << fmt("%.1f", gbs)
        << " GB/s (spmv + 2 dot + 3 axpby); copy " << fmt("%.1f", copy.gbs) << " GB/s\n"
        << "  verification  " << (check.passed ? "PASS" : "FAIL")
        << " (assembled operator: spmv against the Jacobi kernel on random fields, "
        << (check.passed ? std::string("every point")
                         : std::to_string(check.violations) + " points not")
        << " within the rounding bound; worst " << fmt("%.2g", check.max_bound_ratio)
        << " of it)\n";
    if (write_output) out << "  output        " << dir.string() << "/\n";
    std::fputs(out.str().c_str(), stdout);
    if (plot_problem)
      std::fprintf(stderr, "kstencil: convergence plot skipped: %s\n", plot_problem->c_str());
    std::fflush(stdout);
  }
  return check.passed ? 0 : 1;
}

}  // namespace

int run_cg_deck(const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  require_one_rank(comm, "CG");
  const CgSetup setup = cg_setup_from_deck(deck, default_exec_limits());
  return run_with_types(setup.single_precision, setup.layout, [&](auto types) {
    using Types = decltype(types);
    return run_typed<typename Types::value_type, typename Types::layout>(setup, deck, deck_path,
                                                                         comm);
  });
}

}  // namespace kstencil
