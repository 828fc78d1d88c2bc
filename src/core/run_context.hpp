#pragma once
// How the commands call a solver: `kstencil run` prints and writes a run folder; `kstencil sweep`
// runs many configurations in one process, quietly, and keeps each run's summary.
#include <mpi.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/deck.hpp"

namespace kstencil {

struct RunContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  // Nothing on the console: the summary and the console text go to the two fields below.
  bool quiet = false;
  nlohmann::ordered_json* summary = nullptr;  // the run's summary.json facts (every rank)
  std::string* console = nullptr;             // the console summary (rank 0)
  std::string restart;  // a checkpoint to continue (kstencil run --restart), or empty
};

// A solver as the commands see it.
struct SolverEntry {
  std::function<const Schema&()> schema;
  // The set-up alone, on every rank (a DeckError, agreed, when this device cannot run the deck's
  // configuration): nothing is allocated or launched.
  std::function<void(const Deck&, MPI_Comm)> check;
  // Verifies, times and reports; 0 when verified, 1 when not.
  std::function<int(const Deck&, const std::string& deck_path, const RunContext&)> run;
};

}  // namespace kstencil
