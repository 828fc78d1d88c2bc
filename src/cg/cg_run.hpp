#pragma once
// A CG run as the driver does it: deck -> problem and stopping rule -> verification of the
// assembled operator -> solve (printing as Jacobi does) -> time to solution -> output and summary.
#include <mpi.h>

#include <string>

#include "cg/cg.hpp"
#include "core/deck.hpp"
#include "core/run_context.hpp"

namespace kstencil {

struct CgSetup {
  PoissonProblem problem;  // its grid: this rank's part
  MpiConfig mpi;
  Layout layout = Layout::right;
  JacobiPlan check_plan;  // of the Jacobi kernel the operator is checked against
  CgStop stop;
  std::int64_t print_every = 10;
  bool single_precision = false;
  CheckpointConfig checkpoint;
};

// The run the deck asks for on `limits`; throws DeckError for what the schema alone cannot reject.
// Rank `rank` of `ranks`.
CgSetup cg_setup_from_deck(const Deck& deck, const ExecLimits& limits, int rank = 0, int ranks = 1);

// Runs the deck; returns the process exit status (0 verified, 1 verification failed).
// The set-up's checks alone (SolverEntry::check).
void check_cg_deck(const Deck& deck, MPI_Comm comm);
int run_cg_deck(const Deck& deck, const std::string& deck_path, const RunContext& context);

}  // namespace kstencil
