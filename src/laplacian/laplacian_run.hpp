#pragma once
// A Laplacian run as the driver does it: deck -> configuration -> verification -> timing ->
// output and summary.
#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/deck.hpp"
#include "core/exec_space.hpp"
#include "core/run_common.hpp"
#include "core/run_context.hpp"
#include "laplacian/laplacian.hpp"

namespace kstencil {

struct LaplacianSetup {
  Grid whole;  // the global grid
  Grid grid;   // this rank's part of it
  MpiConfig mpi;
  Layout layout = Layout::right;
  bool single_precision = false;
  std::string requested_variant;  // as in the deck ("auto" or a kernel)
  LaplacianPlan plan;             // made once: verification, timing and the report read it
  // Several ranks with overlap: the same kernel over the interior first, then the shell slabs.
  std::vector<LaplacianPlan> overlap_plans;
  TestField field = TestField::sine;
  int warmup = 2, repeats = 10;
};

// The configuration and plans the deck asks for on `limits`, for rank `rank` of `ranks`. Throws
// DeckError (naming the key and what is allowed) for configurations that cannot run there.
LaplacianSetup laplacian_setup_from_deck(const Deck& deck, const ExecLimits& limits, int rank = 0,
                                         int ranks = 1);

nlohmann::ordered_json to_json(const LaplacianVerification& verification);

// The set-up's checks alone (SolverEntry::check).
void check_laplacian_deck(const Deck& deck, MPI_Comm comm);
// Runs the deck; returns the process exit status (0 pass, 1 verification failed).
int run_laplacian_deck(const Deck& deck, const std::string& deck_path, const RunContext& context);

}  // namespace kstencil
