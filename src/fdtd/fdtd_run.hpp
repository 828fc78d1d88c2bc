#pragma once
// An FDTD run as the driver does it: deck -> problem and kernel configuration -> verification ->
// time stepping with diagnostics -> output and summary.
#include <mpi.h>

#include <string>
#include <vector>

#include "core/deck.hpp"
#include "core/exec_space.hpp"
#include "core/run_common.hpp"
#include "core/run_context.hpp"
#include "fdtd/fdtd.hpp"

namespace kstencil {

struct FdtdSetup {
  FdtdProblem problem;
  MpiConfig mpi;  // the node grid's decomposition
  FdtdPlan plan;  // of the update kernels over this rank's cells, computed once here
  std::vector<FdtdPlan> overlap_plans;  // several ranks with overlap: interior, then the shell
  bool single_precision = false;
  std::int64_t steps = 0;
  std::string requested_variant;
  IterOrder requested_iterate = IterOrder::automatic;
  std::vector<Real3> probes;
  CheckpointConfig checkpoint;
};

// The run the deck asks for on `limits`. Throws DeckError (naming the key and what is allowed) for
// what the schema alone cannot reject: a source outside the domain, a cavity mode with fewer than
// two non-zero indices, a block without per-cell media, a tile the device cannot run, a process
// grid that does not fit (rank `rank` of `ranks`).
FdtdSetup fdtd_setup_from_deck(const Deck& deck, const ExecLimits& limits, int rank = 0,
                               int ranks = 1);

// Runs the deck; returns the process exit status (0 pass, 1 verification failed).
// The set-up's checks alone (SolverEntry::check).
void check_fdtd_deck(const Deck& deck, MPI_Comm comm);
int run_fdtd_deck(const Deck& deck, const std::string& deck_path, const RunContext& context);

}  // namespace kstencil
