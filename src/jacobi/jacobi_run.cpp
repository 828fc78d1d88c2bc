#include "jacobi/jacobi_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/kernel_traits.hpp"
#include "core/report.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
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

  const KernelTraits traits = kernel_traits_from_deck(deck);
  s.requested_variant = deck.string("kernel", "variant");
  s.requested_iterate = traits.iterate;
  const NormStrategy norm = parse_norm_strategy(deck.string("jacobi", "norm"));
  JacobiKernelConfig kernel;
  if (s.requested_variant == "auto") {
    kernel = default_jacobi_kernel(limits, grid, traits.layout, traits.iterate, norm);
  } else {
    kernel.layout = traits.layout;
    kernel.iterate = traits.iterate;
    kernel.tile = traits.tile;
    kernel.launch_bounds = *traits.launch_bounds;
    kernel.norm = norm;
  }
  s.plan = plan_jacobi(kernel, grid, limits);
  if (s.plan.problem) throw tile_error(deck, limits, *s.plan.problem);
  return s;
}

namespace {

template <class T, class KokkosLayout>
JacobiVerification verify(const JacobiSetup& s) {
  // Two iterations of the configured kernels (norm on both) against the host reference: the
  // iterate bitwise; the error, a sum of N positive squares summed in another order, within the
  // worst-case bound of recursive summation, (N + 2) eps relative (+2: the difference and square).
  JacobiVerification v;
  JacobiSolver<T, KokkosLayout> solver(s.problem, s.plan);
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
  const double epsilon = s.plan.config.norm == NormStrategy::kokkos_kernels
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
int run_typed(RunTypes<T, KokkosLayout>, const JacobiSetup& s, const Deck& deck,
              const std::string& deck_path, MPI_Comm comm) {
  const RunFolder folder = open_run_folder(deck, deck_path, comm);
  RunReport report("jacobi", default_exec_limits(), rank_count(comm));

  const JacobiVerification verification = verify<T, KokkosLayout>(s);

  JacobiSolver<T, KokkosLayout> solver(s.problem, s.plan);
  const PoissonSolve solve = solve_printing(solver, s.stop, s.print_every, comm);

  // Time per iteration with and without the norm, on a fresh solver.
  JacobiSolver<T, KokkosLayout> timed(s.problem, s.plan);
  const Grid& g = s.problem.grid;
  const double points = point_count(g);
  const double bytes = 2 * points * sizeof(T);  // read the old iterate, write the new one
  const SameRunTiming rounds =
      time_with_copy_ceiling(static_cast<std::int64_t>(points), sizeof(T), 2, s.repeats,
                             {[&] { timed.iterate(true); }, [&] { timed.iterate(false); }});
  const TimingStats& with_norm = rounds.launches[0];
  const TimingStats& without_norm = rounds.launches[1];
  const CopyBandwidth& copy = rounds.copy;
  const double gbs = bytes / with_norm.median_s * 1e-9;
  const double norm_share = 1 - without_norm.median_s / with_norm.median_s;
  const JacobiKernelConfig& kernel = s.plan.config;
  const std::string norm = to_string(kernel.norm);
  const std::string launch_bounds =
      kernel.launch_bounds ? std::to_string(kernel.launch_bounds) : "none";

  report.fact("variant_requested", s.requested_variant)
      .fact("layout", to_string(kernel.layout))
      .fact("iterate", to_string(s.requested_iterate))
      .fact("mapping", s.plan.describe())
      .fact("tile", kernel.tile)
      .fact("launch_bounds", kernel.launch_bounds)
      .fact("norm", norm)
      .fact("norm_every", s.stop.norm_every);
  report_solve(report, g, s.single_precision ? "float" : "double",
               "layout " + to_string(kernel.layout) + ", tile " + format_triple(kernel.tile) +
                   ", launch bounds " + launch_bounds,
               s.stop.tolerance, s.stop.max_iterations, solve);
  report.fact("time_per_iteration_s", with_norm.median_s)
      .fact("time_per_iteration_without_norm_s", without_norm.median_s)
      .fact("norm_share", norm_share)
      .fact("effective_gbs", gbs)
      .fact("effective_gbs_without_norm", bytes / without_norm.median_s * 1e-9)
      .fact("copy_gbs", copy.gbs)
      .fact("fom_ratio", gbs / copy.gbs)
      .verification(verification.passed,
                    {{"passed", verification.passed},
                     {"iterations", 2},
                     {"reference_bitwise", verification.mismatches == 0},
                     {"error_max_relative_diff", verification.error_max_relative_diff}})
      .fact("deck", deck_path);
  report
      .line("iteration", fmt("%.4g", with_norm.median_s * 1e3) + " ms with the " + norm +
                             " norm, " + fmt("%.4g", without_norm.median_s * 1e3) +
                             " ms without (norm share " + fmt("%.1f", 100 * norm_share) + "%); " +
                             fmt("%.1f", gbs) + " GB/s; copy " + fmt("%.1f", copy.gbs) + " GB/s")
      .line(
          "verification",
          std::string(verification.passed ? "PASS" : "FAIL") +
              " (2 iterations against the host reference: iterate " +
              (verification.mismatches == 0 ? std::string("bitwise equal")
                                            : std::to_string(verification.mismatches) + " differ") +
              ", error within " + fmt("%.2g", verification.error_max_relative_diff) + " relative)");

  const auto u = folder.enabled ? solver.solution_host() : std::vector<T>();
  write_poisson_output(report, deck, folder,
                       {"jacobi",
                        g,
                        u.data(),
                        s.single_precision,
                        &solve.result,
                        {{"layout", to_string(kernel.layout)}, {"norm", norm}}},
                       comm);
  return report.finish(folder, deck, comm);
}

}  // namespace

int run_jacobi_deck(const Deck& deck, const std::string& deck_path, MPI_Comm comm) {
  require_one_rank(comm, "Jacobi");
  const JacobiSetup setup = jacobi_setup_from_deck(deck, default_exec_limits());
  return run_with_types(setup.single_precision, setup.plan.config.layout,
                        [&](auto types) { return run_typed(types, setup, deck, deck_path, comm); });
}

}  // namespace kstencil
