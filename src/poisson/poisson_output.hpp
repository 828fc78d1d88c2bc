#pragma once
// What Jacobi and CG runs share: the solve as seed 004 prints it, its facts and console lines, and
// the run folder's solution u (HDF5 + XDMF, when output.fields), history.csv and convergence.png.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

#include "core/deck.hpp"
#include "core/output.hpp"
#include "core/report.hpp"
#include "core/run_common.hpp"
#include "poisson/poisson.hpp"

namespace kstencil {

struct PoissonSolve {
  SolveResult result;
  double seconds = 0;
};

// solver.solve(stop), timed, printing "Iteration = n error = e" every print_every iterations (0:
// never) and then "Success!" or "Failure!" on rank 0, as seed 004 does.
template <class Solver, class Stop>
PoissonSolve solve_printing(Solver& solver, const Stop& stop, std::int64_t print_every,
                            MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  PoissonSolve out;
  Kokkos::fence();
  const auto start = std::chrono::steady_clock::now();
  out.result = solver.solve(stop, [&](std::int64_t iteration, double error) {
    if (rank == 0 && print_every > 0 && iteration % print_every == 0)
      std::cout << "Iteration = " << iteration << " error = " << error << std::endl;
  });
  Kokkos::fence();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) std::cout << (out.result.converged ? "Success!\n" : "Failure!\n");
  return out;
}

// The grid and the solve: facts precision .. solve_s, the console's "grid" line (the grid, the
// precision, then `grid_details`) and its "solve" line.
void report_solve(RunReport& report, const Grid& grid, const std::string& precision,
                  const std::string& grid_details, double tolerance, std::int64_t max_iterations,
                  const PoissonSolve& solve);

struct PoissonRunOutput {
  std::string solver;  // "jacobi" or "cg": the plot's title and the HDF5 "kernel" attribute
  Grid grid;
  const void* solution = nullptr;  // x fastest, every point; read only with output.fields
  bool single_precision = false;
  const SolveResult* result = nullptr;
  Attributes attributes;  // solver-specific HDF5 attributes (layout, norm, ...)
};

// u into the run folder (collective over comm), history.csv and its plot into the report, and the
// console's "output" line.
void write_poisson_output(RunReport& report, const Deck& deck, const RunFolder& folder,
                          const PoissonRunOutput& out, MPI_Comm comm);

}  // namespace kstencil
