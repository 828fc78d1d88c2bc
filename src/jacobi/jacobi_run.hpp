#pragma once
// A Jacobi run as the driver does it: deck -> problem, kernel and stopping rule -> verification ->
// solve (printing as seed 004 does) -> timing -> output and summary.
#include <mpi.h>

#include <string>
#include <vector>

#include "core/deck.hpp"
#include "core/exec_space.hpp"
#include "core/run_common.hpp"
#include "core/run_context.hpp"
#include "jacobi/jacobi.hpp"

namespace kstencil {

struct JacobiSetup {
  PoissonProblem problem;  // its grid: this rank's part
  MpiConfig mpi;
  JacobiPlan plan;                        // of the update kernel, computed once here
  std::vector<JacobiPlan> overlap_plans;  // several ranks with overlap: interior, then the shell
  JacobiStop stop;
  std::int64_t print_every = 10;
  int repeats = 20;
  bool single_precision = false;
  std::string requested_variant, requested_norm;
  IterOrder requested_iterate = IterOrder::automatic;
  CheckpointConfig checkpoint;
};

struct JacobiVerification {
  std::int64_t mismatches = 0;  // iterate values not bitwise equal to the host reference
  double error_max_relative_diff = 0;
  bool passed = false;
};

// The run the deck asks for on `limits`, for rank `rank` of `ranks`. Throws DeckError for what the
// schema alone cannot reject: an axis of 2 points (no interior), a z axis without a y axis, a tile
// the device cannot run, a process grid that does not fit.
JacobiSetup jacobi_setup_from_deck(const Deck& deck, const ExecLimits& limits, int rank = 0,
                                   int ranks = 1);

// Runs the deck; returns the process exit status (0 verified, 1 verification failed).
// The set-up's checks alone (SolverEntry::check).
void check_jacobi_deck(const Deck& deck, MPI_Comm comm);
int run_jacobi_deck(const Deck& deck, const std::string& deck_path, const RunContext& context);

}  // namespace kstencil
