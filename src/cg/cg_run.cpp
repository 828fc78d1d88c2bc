#include "cg/cg_run.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "core/kernel_traits.hpp"
#include "core/memory.hpp"
#include "core/report.hpp"
#include "core/restart.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "poisson/poisson_deck.hpp"
#include "poisson/poisson_output.hpp"

namespace kstencil {

CgSetup cg_setup_from_deck(const Deck& deck, const ExecLimits& limits, const int rank,
                           const int ranks) {
  CgSetup s;
  s.problem = poisson_problem_from_deck(deck);
  s.layout = kernel_traits_from_deck(deck).layout;
  s.mpi = mpi_config_from_deck(deck, s.problem.grid.points, rank, ranks, s.layout, limits);
  if (!deck.is_auto("mpi", "overlap") && deck.boolean("mpi", "overlap"))
    throw deck.error("mpi", "overlap",
                     "CG applies its operator with one spmv over every row: nothing to overlap",
                     "false or \"auto\" for CG");
  s.mpi.overlap = false;
  s.problem.grid = s.mpi.local_grid(s.problem.grid);
  const Grid& grid = s.problem.grid;
  if (static_cast<double>(grid.allocated.size()) > std::numeric_limits<int>::max())
    throw deck.error("grid", "nx", "CG's matrix has int row indices: too many points per rank",
                     "nx * ny * nz at most " + std::to_string(std::numeric_limits<int>::max()) +
                         " per rank (more ranks, or a smaller grid)");
  s.stop = {deck.real("cg", "tolerance"), deck.integer("cg", "max_iterations")};
  s.print_every = deck.integer("cg", "print_every");
  s.checkpoint = checkpoint_config_from_deck(deck);
  s.single_precision = deck.string("run", "precision") == "float";
  s.check_plan = plan_jacobi(
      default_jacobi_kernel(limits, grid, s.layout, IterOrder::automatic, NormStrategy::reduce),
      grid, limits);
  // Five vectors, the operator's rows (7 values and column indices, one row offset per point),
  // the operator check's and the same-run copy's arrays; a checkpoint's copies of u, r and p.
  const double value = s.single_precision ? 4 : 8;
  const double points = static_cast<double>(grid.allocated.size());
  const double device = points * (10 * value + 7 * (value + 4) + 8);
  check_memory(deck,
               {device, 3 * points * value, device + 3 * points * value,
                "10 vectors and a 7-point sparse matrix"},
               grid.points, limits);
  return s;
}

namespace {

template <class T, class KokkosLayout>
int run_typed(RunTypes<T, KokkosLayout>, const CgSetup& s, const Deck& deck,
              const std::string& deck_path, const RunContext& context, const Checkpoint* restart) {
  const MPI_Comm world = context.comm;
  Decomposition d = decompose(world, s.mpi.dims, s.mpi.transport);
  MPI_Comm comm = d.comm;
  const RunFolder folder = open_run_folder(deck, deck_path, comm, restart);
  RunReport report("cg", default_exec_limits(), d.ranks);
  const Grid& g = s.problem.grid;

  OperatorCheck check = check_operator_against_stencil<T, KokkosLayout>(g, s.check_plan);
  check.max_bound_ratio = global_max(check.max_bound_ratio, comm);
  check.violations = static_cast<std::int64_t>(global_sum(double(check.violations), comm));
  check.passed = check.violations == 0;
  {  // The first launches of each Kokkos Kernels kernel, outside the timed solve.
    CgSolver<T, KokkosLayout> warm_up(s.problem, d);
    warm_up.solve({std::numeric_limits<double>::min(), 2});
  }

  CgSolver<T, KokkosLayout> solver(s.problem, d);
  SolveContinuation from;
  if (restart) {
    const auto read = [&](const char* name) { return restart->read<T>(name, g.points, g.owned); };
    solver.restore({read("u"), read("r"), read("p"), exact_double(restart->state().at("rr"))});
    from.start = solve_result_of(restart->state());
  }
  CheckpointWriter checkpoints(folder.dir, s.checkpoint, "cg", deck.resolved_toml(), comm);
  const auto save = [&](const SolveResult& so_far) {
    const auto state = solver.state_host();
    nlohmann::json json = solve_state(so_far);
    json["rr"] = exact_json(state.rr);
    checkpoints.write(
        so_far.iterations, json,
        std::vector<FieldData>{grid_field("u", g, state.u.data(), s.single_precision),
                               grid_field("r", g, state.r.data(), s.single_precision),
                               grid_field("p", g, state.p.data(), s.single_precision)});
  };
  from.checkpoint_every = checkpoints.enabled() ? s.checkpoint.every : 0;
  from.checkpoint = save;
  const PoissonSolve solve =
      solve_printing(solver, s.stop, s.print_every, comm, context.quiet, from);
  const SolveResult& result = solve.result;
  if (checkpoints.enabled() &&
      (result.interrupted || (s.checkpoint.every > 0 && result.iterations > from.start.iterations)))
    save(result);
  const auto residual = solver.residual();

  const double seconds = global_max(solve.seconds, comm);               // the slowest rank's
  const std::int64_t done = result.iterations - from.start.iterations;  // by this run
  // Nothing to time where this run took no iteration (a solve that starts converged, a restart at
  // its end, a signal before the first): its figures are null, and no copy is timed.
  const bool timed = done > 0;
  const double per_iteration_s = timed ? seconds / static_cast<double>(done) : 0;
  const double bytes = global_sum(solver.bytes_per_iteration(), comm);
  CopyBandwidth copy;
  if (timed) copy = measure_copy_bandwidth(g.owned.size(), sizeof(T), 2, 20);
  copy.gbs = global_sum(copy.gbs, comm);
  const double gbs = timed ? bytes / per_iteration_s * 1e-9 : 0;
  const auto figure = [&](double value) {
    return timed ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };

  report.fact("layout", to_string(s.layout));
  report_checkpoints(report, restart, checkpoints, "iteration");
  report_solve(report, g, s.single_precision ? "float" : "double",
               "layout " + to_string(s.layout) + ", " +
                   fmt("%.0f", global_sum(double(solver.matrix().nnz()), comm)) + " matrix entries",
               s.stop.tolerance, s.stop.max_iterations, solve);
  report.fact("true_error", residual.error)
      .fact("relative_residual", residual.relative)
      .fact("time_per_iteration_s", figure(per_iteration_s))
      .fact("matrix_nonzeros", global_sum(double(solver.matrix().nnz()), comm))
      .fact("bytes_per_iteration", bytes)
      .fact("effective_gbs", figure(gbs))
      .fact("copy_gbs", figure(copy.gbs))
      .fact("fom_ratio", figure(timed ? gbs / copy.gbs : 0));
  if (timed) report.timing(slowest_rank(summarize(solve.iteration_s), comm), "iteration", gbs);
  // Values past the precision's range (a huge right-hand side or boundary): the solve's numbers
  // are no numbers, whatever the operator's check says.
  const bool finite = std::isfinite(result.error) && std::isfinite(residual.relative);
  const bool passed = check.passed && finite;
  report
      .verification(
          passed,
          {{"passed", passed},
           {"finite", finite},
           {"check", "spmv of the assembled operator against the Jacobi kernel, random fields"},
           {"max_bound_ratio", check.max_bound_ratio},
           {"violations", check.violations}})
      .fact("deck", deck_path);
  report
      .line("residual", "recomputed from u: error " + fmt("%.6g", residual.error) +
                            ", ||b - A u|| / ||b|| " + fmt("%.3g", residual.relative))
      .line("iteration", timed ? fmt("%.4g", per_iteration_s * 1e3) + " ms; " + fmt("%.1f", gbs) +
                                     " GB/s (spmv + 2 dot + 3 axpby); copy " +
                                     fmt("%.1f", copy.gbs) + " GB/s"
                               : std::string("not timed (no iteration run)"))
      .line(
          "verification",
          std::string(passed ? "PASS" : "FAIL") + " (" +
              unrepresentable_solve(std::isfinite(result.error) ? residual.relative : result.error,
                                    s.single_precision) +
              "assembled operator: spmv against the Jacobi kernel on random fields, " +
              (check.passed ? std::string("every point")
                            : std::to_string(check.violations) + " points not") +
              " within the rounding bound; worst " + fmt("%.2g", check.max_bound_ratio) +
              " of it)");

  const auto u = folder.enabled ? solver.solution_host() : std::vector<T>();
  write_poisson_output(
      report, deck, folder,
      {"cg", g, u.data(), s.single_precision, &result, {{"layout", to_string(s.layout)}}}, comm);
  describe_halo(report, {d, false, solver.halo().path(), solver.halo().times});
  const int status = report.finish(folder, deck, comm, context);
  free_decomposition(d);
  return status;
}

}  // namespace

CgSetup agreed_cg_setup(const Deck& deck, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return agreed_setup(comm, [&] {
    return cg_setup_from_deck(deck, default_exec_limits(), rank, rank_count(comm));
  });
}

void check_cg_deck(const Deck& deck, MPI_Comm comm) {
  agreed_cg_setup(deck, comm);
}

int run_cg_deck(const Deck& deck, const std::string& deck_path, const RunContext& context) {
  const std::optional<Checkpoint> restart = open_restart(deck, context, "cg", cg_schema());
  const CgSetup setup = agreed_cg_setup(deck, context.comm);
  return run_with_types(setup.single_precision, setup.layout, [&](auto types) {
    return run_typed(types, setup, deck, deck_path, context, restart ? &*restart : nullptr);
  });
}

}  // namespace kstencil
