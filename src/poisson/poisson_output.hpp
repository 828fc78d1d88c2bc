#pragma once
// What Jacobi and CG runs share: the solve as seed 004 prints it, its facts and console lines, and
// the run folder's solution u (HDF5 + XDMF, when output.fields), history.csv and convergence.png.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/deck.hpp"
#include "core/output.hpp"
#include "core/report.hpp"
#include "core/run_common.hpp"
#include "poisson/poisson.hpp"

namespace kstencil {

struct PoissonSolve {
  SolveResult result;
  double seconds = 0;
  // Time per iteration between consecutive reports of the error (each waits for its norm).
  std::vector<double> iteration_s;
};

// solver.solve(stop), timed, printing "Iteration = n error = e" every print_every iterations (0:
// never) and then "Success!" or "Failure!" on rank 0, as seed 004 does (nothing when quiet).
template <class Solver, class Stop>
PoissonSolve solve_printing(Solver& solver, const Stop& stop, std::int64_t print_every,
                            MPI_Comm comm, bool quiet, const SolveContinuation& from = {}) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool prints = rank == 0 && !quiet;
  PoissonSolve out;
  Kokkos::fence();
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  std::int64_t last_iteration = from.start.iterations;
  out.result = solver.solve(
      stop,
      [&](std::int64_t iteration, double error) {
        const auto now = std::chrono::steady_clock::now();
        if (iteration > last_iteration)
          out.iteration_s.push_back(std::chrono::duration<double>(now - last).count() /
                                    static_cast<double>(iteration - last_iteration));
        last = now;
        last_iteration = iteration;
        if (prints && print_every > 0 && iteration % print_every == 0)
          std::cout << "Iteration = " << iteration << " error = " << error << std::endl;
      },
      from);
  Kokkos::fence();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (prints)
    std::cout << (out.result.interrupted ? "Stopped by a signal at iteration " +
                                               std::to_string(out.result.iterations) + "\n"
                  : out.result.converged ? "Success!\n"
                                         : "Failure!\n");
  return out;
}

// The grid and the solve: facts precision .. solve_s, the console's "grid" line (the grid, the
// precision, then `grid_details`) and its "solve" line.
void report_solve(RunReport& report, const Grid& grid, const std::string& precision,
                  const std::string& grid_details, double tolerance, std::int64_t max_iterations,
                  const PoissonSolve& solve);

// A solve's progress as a checkpoint keeps it (iterations, error, history; doubles exact), and
// back.
nlohmann::json solve_state(const SolveResult& result);
SolveResult solve_result_of(const nlohmann::json& state);
// A grid array of this rank (its owned box, x fastest) as output and checkpoints write it.
FieldData grid_field(const std::string& name, const Grid& grid, const void* values,
                     bool single_precision);

struct PoissonRunOutput {
  std::string solver;  // "jacobi" or "cg": the plot's title and the HDF5 "kernel" attribute
  Grid grid;
  const void* solution = nullptr;  // x fastest, every point; read only with output.fields
  bool single_precision = false;
  const SolveResult* result = nullptr;
  Attributes attributes;  // solver-specific HDF5 attributes (layout, norm, ...)
};

// What a verification line says first where the solve's error is no number (values past the
// precision's range): the reason it fails; "" where the error is a number.
inline std::string unrepresentable_solve(double error, bool single_precision) {
  if (std::isfinite(error)) return "";
  return "the solve's error is " + fmt("%g", error) + ": values past " +
         (single_precision ? "float" : "double") + "'s range, scale the problem down; ";
}

// u into the run folder (collective over comm; not for a solve a signal stopped, whose state the
// checkpoint holds), history.csv and its plot into the report, and the console's "output" line.
void write_poisson_output(RunReport& report, const Deck& deck, const RunFolder& folder,
                          const PoissonRunOutput& out, MPI_Comm comm);

}  // namespace kstencil
