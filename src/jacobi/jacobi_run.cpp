#include "jacobi/jacobi_run.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/interrupt.hpp"
#include "core/kernel_traits.hpp"
#include "core/memory.hpp"
#include "core/report.hpp"
#include "core/restart.hpp"
#include "core/run_common.hpp"
#include "core/timing.hpp"
#include "poisson/poisson_deck.hpp"
#include "poisson/poisson_output.hpp"

namespace kstencil {

JacobiSetup jacobi_setup_from_deck(const Deck& deck, const ExecLimits& limits, const int rank,
                                   const int ranks) {
  JacobiSetup s;
  s.problem = poisson_problem_from_deck(deck);
  const KernelTraits traits = kernel_traits_from_deck(deck);
  s.mpi = mpi_config_from_deck(deck, s.problem.grid.points, rank, ranks, traits.layout, limits);
  s.problem.grid = s.mpi.local_grid(s.problem.grid);
  const Grid& grid = s.problem.grid;
  s.stop = {deck.real("jacobi", "tolerance"), deck.integer("jacobi", "max_iterations"),
            static_cast<int>(deck.integer("jacobi", "norm_every"))};
  s.print_every = deck.integer("jacobi", "print_every");
  s.checkpoint = checkpoint_config_from_deck(deck);
  s.repeats = static_cast<int>(deck.integer("run", "repeats"));
  s.single_precision = deck.string("run", "precision") == "float";

  s.requested_variant = deck.string("kernel", "variant");
  s.requested_iterate = traits.iterate;
  s.requested_norm = deck.string("jacobi", "norm");
  const NormStrategy norm = s.requested_norm == "auto" ? default_norm_strategy(limits, grid)
                                                       : parse_norm_strategy(s.requested_norm);
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
  if (!deck.is_auto("kernel", "blocks_per_item")) {
    if (norm != NormStrategy::blocked || s.requested_variant != "mdrange")
      throw deck.error("kernel", "blocks_per_item",
                       "applies to the blocked norm's kernel with kernel.variant = \"mdrange\" "
                       "(this run: jacobi.norm = \"" +
                           to_string(norm) + "\", kernel.variant = \"" + s.requested_variant +
                           "\")",
                       "\"auto\", or an integer >= 1 with jacobi.norm = \"blocked\" and "
                       "kernel.variant = \"mdrange\"");
    kernel.blocks_per_item = static_cast<int>(deck.integer("kernel", "blocks_per_item"));
  }
  kernel.element_bytes = s.single_precision ? 4 : 8;
  if (norm == NormStrategy::kokkos_kernels && ranks > 1)
    throw deck.error("jacobi", "norm",
                     "Kokkos Kernels' nrm2 sums every stored point, the ghost layers of " +
                         std::to_string(ranks) + " ranks included",
                     "\"reduce\", \"reduce-range\" or \"atomic\" on several ranks");
  for (int d = 0; d < 3 && (norm == NormStrategy::blocked || norm == NormStrategy::line); ++d)
    if (is_collapsed(grid, d))
      throw deck.error("jacobi", "norm",
                       "\"" + to_string(norm) +
                           "\" updates 3D grids; this grid has one point along " +
                           std::string(1, "xyz"[d]),
                       "\"auto\", \"reduce\", \"reduce-range\", \"atomic\", "
                       "\"kokkos-kernels\" or \"team\" for 1D and 2D grids");
  if (norm == NormStrategy::line && limits.gpu)
    throw deck.error("jacobi", "norm",
                     "\"line\" is a host kernel (rows a work item: on an H100 0.001 of the copy)",
                     "\"auto\", \"blocked\", \"team\", \"reduce\", \"reduce-range\", "
                     "\"atomic\" or \"kokkos-kernels\" on GPUs");
  s.plan = plan_jacobi(kernel, grid, limits);
  if (s.plan.problem) throw tile_error(deck, limits, *s.plan.problem);
  if (ranks > 1 && s.mpi.overlap) {
    const OverlapSplit split = split_for_overlap(grid.to_local(owned_interior(grid)), grid);
    s.overlap_plans.push_back(plan_jacobi(kernel, grid, split.interior, limits));
    for (const Box& box : split.shell)
      s.overlap_plans.push_back(plan_jacobi(kernel, grid, box, limits));
    for (const JacobiPlan& p : s.overlap_plans)
      if (p.problem)
        throw tile_error(deck, limits, *p.problem + " (a part of the overlapped update)");
  }
  // Two solvers (iterate, next iterate, right-hand side) and the same-run copy's two arrays; the
  // host reference's three arrays and the output's copy of u.
  const double field = static_cast<double>(grid.allocated.size()) * (s.single_precision ? 4 : 8);
  check_memory(deck,
               {8 * field, 4 * field, 9 * field, "about 8 fields on the device, 4 on the host"},
               grid.points, limits);
  return s;
}

namespace {

template <class T, class KokkosLayout>
JacobiVerification verify(const JacobiSetup& s, const Decomposition& d) {
  // Two iterations of the configured kernels (norm on both) against the host reference: the
  // iterate bitwise; the error, a sum of N positive squares summed in another order, within the
  // worst-case bound of recursive summation (jacobi_error_tolerance).
  // On several ranks the reference covers the owned box and two layers beyond it (what two
  // iterations of the owned points depend on), from the problem's own start values.
  JacobiVerification v;
  JacobiSolver<T, KokkosLayout> solver(s.problem, s.plan, d, s.overlap_plans);
  const Grid& g = s.problem.grid;
  Box values = g.owned;
  for (int axis = 0; axis < 3; ++axis) {
    if (g.allocated.lo[axis] < g.owned.lo[axis]) values.lo[axis] -= 2;
    if (g.allocated.hi[axis] > g.owned.hi[axis]) values.hi[axis] += 2;
  }
  values = values.intersect(g.global());
  std::vector<T> current, rhs, next;
  for (Index k = values.lo[2]; k < values.hi[2]; ++k)
    for (Index j = values.lo[1]; j < values.hi[1]; ++j)
      for (Index i = values.lo[0]; i < values.hi[0]; ++i) {
        const bool edge = is_boundary(g, {i, j, k});
        current.push_back(
            static_cast<T>(edge ? s.problem.boundary({i, j, k})
                                : (s.problem.initial ? s.problem.initial({i, j, k}) : 0.0)));
        if (s.problem.rhs) rhs.push_back(static_cast<T>(edge ? 0.0 : s.problem.rhs({i, j, k})));
      }
  const double points = point_count(g);
  double tolerance = jacobi_error_tolerance(s.plan, points);
  for (const JacobiPlan& part : s.overlap_plans)
    tolerance = std::max(tolerance, jacobi_error_tolerance(part, points));
  v.passed = true;
  Box update = values;
  for (int it = 0; it < 2; ++it) {
    // Points next to a cut edge of `values` lack a neighbour: each iteration is right one layer
    // less.
    for (int axis = 0; axis < 3; ++axis) {
      if (values.lo[axis] > 0) update.lo[axis] += 1;
      if (values.hi[axis] < g.points[axis]) update.hi[axis] -= 1;
    }
    const double error = *solver.iterate(true);
    const double local =
        jacobi_reference_iteration(g, values, update, owned_interior(g), current, rhs, next);
    const double want = std::sqrt(global_sum(local, d.comm) / points);
    current.swap(next);
    v.error_max_relative_diff =
        std::max(v.error_max_relative_diff, std::abs(error - want) / std::max(want, 1e-300));
    v.passed = v.passed && std::abs(error - want) <= tolerance * want;
  }
  const auto got = solver.solution_host();
  std::size_t q = 0;
  for (Index k = g.owned.lo[2]; k < g.owned.hi[2]; ++k)
    for (Index j = g.owned.lo[1]; j < g.owned.hi[1]; ++j)
      for (Index i = g.owned.lo[0]; i < g.owned.hi[0]; ++i, ++q) {
        const Index3 n = values.extents();
        const std::size_t r = static_cast<std::size_t>(
            (i - values.lo[0]) + n[0] * ((j - values.lo[1]) + n[1] * (k - values.lo[2])));
        v.mismatches += got[q] != current[r];
      }
  v.mismatches = static_cast<std::int64_t>(global_sum(static_cast<double>(v.mismatches), d.comm));
  v.error_max_relative_diff = global_max(v.error_max_relative_diff, d.comm);
  v.passed = all_ranks(v.passed, d.comm) && v.mismatches == 0;
  return v;
}

template <class T, class KokkosLayout>
int run_typed(RunTypes<T, KokkosLayout>, const JacobiSetup& s, const Deck& deck,
              const std::string& deck_path, const RunContext& context, const Checkpoint* restart) {
  const MPI_Comm world = context.comm;
  Decomposition d = decompose(world, s.mpi.dims, s.mpi.transport);
  MPI_Comm comm = d.comm;
  const RunFolder folder = open_run_folder(deck, deck_path, comm, restart);
  RunReport report("jacobi", default_exec_limits(), d.ranks);

  const JacobiVerification verification = verify<T, KokkosLayout>(s, d);

  JacobiSolver<T, KokkosLayout> solver(s.problem, s.plan, d, s.overlap_plans);
  const Grid& g = s.problem.grid;
  SolveContinuation from;
  if (restart) {
    solver.restore(restart->read<T>("u", g.points, g.owned));
    from.start = solve_result_of(restart->state());
  }
  CheckpointWriter checkpoints(folder.dir, s.checkpoint, "jacobi", deck.resolved_toml(), comm);
  const auto save = [&](const SolveResult& so_far) {
    const std::vector<T> u = solver.solution_host();
    checkpoints.write(so_far.iterations, solve_state(so_far),
                      std::vector<FieldData>{grid_field("u", g, u.data(), s.single_precision)});
  };
  from.checkpoint_every = checkpoints.enabled() ? s.checkpoint.every : 0;
  from.checkpoint = save;
  const PoissonSolve solve =
      solve_printing(solver, s.stop, s.print_every, comm, context.quiet, from);
  if (checkpoints.enabled() &&
      (solve.result.interrupted ||
       (s.checkpoint.every > 0 && solve.result.iterations > from.start.iterations)))
    save(solve.result);

  // Time per iteration with and without the norm, on a fresh solver, over stretches of
  // iterations as a solve queues them (with the norm: solve()'s loop, each error read while the
  // next iteration runs), against copies queued back to back. Not after a signal: the run ends
  // with what it has (a signal cuts the timed solves short, so one during them voids them too).
  const bool time_it = !solve.result.interrupted && !interrupt_agreed(comm);
  std::optional<JacobiSolver<T, KokkosLayout>> timed_solver;
  if (time_it) timed_solver.emplace(s.problem, s.plan, d, s.overlap_plans);
  const double points = point_count(g);
  const double bytes = 2 * points * sizeof(T);  // read the old iterate, write the new one
  // On host back ends each launch completes before it returns: one iteration a sample is the same.
  constexpr int stretch = StreamMark::asynchronous() ? static_cast<int>(interrupt_check_every) : 1;
  const JacobiStop every_iteration{-1.0, stretch, 1};  // tolerance -1: no early stop
  SameRunTiming rounds;
  if (time_it)
    rounds = time_with_copy_ceiling(g.owned.size(), sizeof(T), 2, s.repeats,
                                    {[&] { timed_solver->solve(every_iteration); },
                                     [&] {
                                       for (int n = 0; n < stretch; ++n)
                                         timed_solver->iterate(false);
                                     }},
                                    stretch, [&] { return interrupt_agreed(comm); });
  const bool timed = time_it && !rounds.stopped && !interrupt_agreed(comm);
  // Across ranks: the slowest rank's times against the copy of every rank summed.
  const TimingStats with_norm = timed ? slowest_rank(rounds.launches[0], comm) : TimingStats{};
  const TimingStats without_norm = timed ? slowest_rank(rounds.launches[1], comm) : TimingStats{};
  CopyBandwidth copy = rounds.copy;
  copy.gbs = global_sum(copy.gbs, comm);
  const double gbs = timed ? bytes / with_norm.median_s * 1e-9 : 0;
  const double norm_share = timed ? 1 - without_norm.median_s / with_norm.median_s : 0;
  // A figure of summary.json, null where nothing was timed.
  const auto figure = [&](double value) {
    return timed ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };
  const JacobiKernelConfig& kernel = s.plan.config;
  const std::string norm = to_string(kernel.norm);
  // What runs: blocked's tile and launch bounds are its plan's (the configuration's 0s resolved).
  const bool blocked = s.plan.blocked && s.plan.blocked->launch;
  const std::array<std::int64_t, 3> tile =
      blocked ? to_axis_order(s.plan.blocked->mapping, s.plan.blocked->launch->tile) : kernel.tile;
  const int bounds = blocked ? s.plan.blocked->params.launch_bounds : kernel.launch_bounds;
  const std::string launch_bounds = bounds ? std::to_string(bounds) : "none";

  report.fact("variant_requested", s.requested_variant)
      .fact("layout", to_string(kernel.layout))
      .fact("iterate", to_string(s.requested_iterate))
      .fact("mapping", s.plan.describe())
      .fact("tile", tile)
      .fact("launch_bounds", bounds)
      .fact("norm", norm)
      .fact("norm_requested", s.requested_norm)
      .fact("norm_every", s.stop.norm_every)
      .fact("timed_iterations_per_sample", stretch);
  report_checkpoints(report, restart, checkpoints, "iteration");
  report_solve(report, g, s.single_precision ? "float" : "double",
               "layout " + to_string(kernel.layout) + ", tile " + format_triple(tile) +
                   ", launch bounds " + launch_bounds,
               s.stop.tolerance, s.stop.max_iterations, solve);
  report.fact("time_per_iteration_s", figure(with_norm.median_s))
      .fact("time_per_iteration_without_norm_s", figure(without_norm.median_s))
      .fact("norm_share", figure(norm_share))
      .fact("effective_gbs", figure(gbs))
      .fact("effective_gbs_without_norm", figure(timed ? bytes / without_norm.median_s * 1e-9 : 0))
      .fact("copy_gbs", figure(copy.gbs))
      .fact("copy_bytes_per_rank", figure(copy_bytes(copy)))
      .fact("fom_ratio", figure(timed ? gbs / copy.gbs : 0));
  if (timed) report.timing(with_norm, "iteration", gbs);
  // Values past the precision's range: the solve's error is no number, whatever the kernels'
  // agreement with the reference says.
  const bool finite = std::isfinite(solve.result.error);
  const bool passed = verification.passed && finite;
  report
      .verification(passed, {{"passed", passed},
                             {"finite", finite},
                             {"iterations", 2},
                             {"reference_bitwise", verification.mismatches == 0},
                             {"error_max_relative_diff", verification.error_max_relative_diff}})
      .fact("deck", deck_path);
  report.line("kernel", norm + " norm: " + s.plan.describe())
      .line("iteration", timed ? fmt("%.4g", with_norm.median_s * 1e3) + " ms with the " + norm +
                                     " norm, " + fmt("%.4g", without_norm.median_s * 1e3) +
                                     " ms without (norm share " + fmt("%.1f", 100 * norm_share) +
                                     (norm_share < 0 ? "%: none measurable, the update alone "
                                                       "timed slower); "
                                                     : "%); ") +
                                     fmt("%.1f", gbs) + " GB/s; copy " + fmt("%.1f", copy.gbs) +
                                     " GB/s"
                               : std::string("not timed (stopped by a signal)"))
      .line(
          "verification",
          std::string(passed ? "PASS" : "FAIL") + " (" +
              unrepresentable_solve(solve.result.error, s.single_precision) +
              "2 iterations against the host reference: iterate " +
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
  const HaloExchange<T, KokkosLayout>& halo = time_it ? timed_solver->halo() : solver.halo();
  describe_halo(report, {d, s.mpi.overlap, halo.path(), halo.times});
  const int status = report.finish(folder, deck, comm, context);
  free_decomposition(d);
  return status;
}

}  // namespace

JacobiSetup agreed_jacobi_setup(const Deck& deck, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return agreed_setup(comm, [&] {
    return jacobi_setup_from_deck(deck, default_exec_limits(), rank, rank_count(comm));
  });
}

void check_jacobi_deck(const Deck& deck, MPI_Comm comm) {
  agreed_jacobi_setup(deck, comm);
}

int run_jacobi_deck(const Deck& deck, const std::string& deck_path, const RunContext& context) {
  const std::optional<Checkpoint> restart = open_restart(deck, context, "jacobi", jacobi_schema());
  const JacobiSetup setup = agreed_jacobi_setup(deck, context.comm);
  return run_with_types(setup.single_precision, setup.plan.config.layout, [&](auto types) {
    return run_typed(types, setup, deck, deck_path, context, restart ? &*restart : nullptr);
  });
}

}  // namespace kstencil
