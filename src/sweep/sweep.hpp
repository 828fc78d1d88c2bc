#pragma once
// `kstencil sweep`: every configuration of a parameter space checked against the device, verified
// and timed in this one process, its result appended to the sweep folder's cache as it finishes;
// then the best re-timed in alternation with the default, and the folder's tables, plots and
// best.toml written from the cache.
#include <mpi.h>

#include <string>
#include <vector>

#include "core/run_context.hpp"

namespace kstencil {

struct SweepOptions {
  std::string deck_path;
  std::vector<std::string> overrides;  // deck keys and sweep.* keys, section.key=value
  std::vector<std::string> vary;       // --vary key=v1,v2,...
  std::string tiles;                   // --tiles MIN:MAX
  bool replot = false;                 // write the folder's files from the cache; run nothing
  bool overwrite = false;              // start afresh in an existing sweep folder
  bool dry_run = false;                // list the configurations and their checks; write nothing
};

// Collective over comm. Returns 0 when every launched configuration verified, 1 when one did not
// (WRONG) or failed; deck problems are DeckErrors, as for `run`.
int run_sweep(const SweepOptions& options, const std::string& solver_name,
              const SolverEntry& solver, MPI_Comm comm);

}  // namespace kstencil
