#pragma once
// Checkpoints of the solvers that evolve a state (FDTD, Jacobi, CG): the whole state at one step
// or iteration in one HDF5 file, so that `kstencil run DECK --restart FILE` continues the run
// bitwise, on any number of ranks.
//
// A checkpoint holds each state array as one dataset over the global grid ((z, y, x) in the file,
// like the step files: each rank reads its own box, whatever the decomposition) and, on the root
// group, the format, the solver, the step, the resolved deck and the rest of the state (counters,
// histories, scalars) as JSON text whose doubles read back bitwise.
#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/deck.hpp"
#include "core/grid.hpp"
#include "core/output.hpp"

namespace kstencil {

struct CheckpointConfig {
  std::int64_t every = 0;  // steps or iterations between checkpoints; 0 = only on a signal
  std::int64_t keep = 2;   // the newest checkpoints a run folder keeps
};
// [checkpoint]; every > 0 needs a run folder (a DeckError naming output.enabled otherwise).
CheckpointConfig checkpoint_config_from_deck(const Deck& deck);

// A double as JSON that reads back to the same bits (shortest round-trip text; "nan", "inf" and
// "-inf" as strings, which JSON numbers cannot hold), and back.
nlohmann::json exact_json(double value);
double exact_double(const nlohmann::json& value);

// The checkpoints of one run: checkpoint_<step>.h5 in its folder, the newest `keep` kept.
class CheckpointWriter {
 public:
  // `dir` empty: the run has no folder, and nothing is written.
  CheckpointWriter(std::filesystem::path dir, CheckpointConfig config, std::string solver,
                   std::string deck_toml, MPI_Comm comm);
  bool enabled() const { return !dir_.empty(); }
  // A checkpoint is due at `step` (the deck's cadence; a run's first step never).
  bool due(std::int64_t step, std::int64_t first) const {
    return enabled() && config_.every > 0 && step > first && step % config_.every == 0;
  }
  // Collective: the state at `step` (`fields`: this rank's boxes of the global arrays; `state`:
  // the same on every rank), then the oldest beyond `keep` removed. Returns the file.
  std::filesystem::path write(std::int64_t step, const nlohmann::json& state,
                              const std::vector<FieldData>& fields);
  // The last file written ("" if none).
  const std::filesystem::path& last() const { return last_; }

 private:
  std::filesystem::path dir_, last_;
  CheckpointConfig config_;
  std::string solver_, deck_toml_;
  MPI_Comm comm_;
};

// A checkpoint opened for a restart: its root attributes, and its arrays read box by box.
class Checkpoint {
 public:
  // Every rank reads it; a missing or foreign file, or one of another solver, is a DeckError
  // naming the file (agreed over comm).
  static Checkpoint open(const std::string& path, const std::string& solver, MPI_Comm comm);
  const std::string& path() const { return path_; }
  std::int64_t step() const { return step_; }
  const std::string& deck_toml() const { return deck_; }
  const nlohmann::json& state() const { return state_; }
  // Values of dataset `name` over `box` (global indices), x fastest; the dataset must have
  // `dims` (x, y, z) values and T's precision. Each rank reads its own box.
  template <class T>
  std::vector<T> read(const std::string& name, const Index3& dims, const Box& box) const;

 private:
  std::string path_, deck_;
  std::int64_t step_ = 0;
  nlohmann::json state_;
};

// A restart continues the checkpoint's problem: every key of `deck` that defines it (the solver,
// precision, grid, physics, initial and boundary values, probes) must equal the checkpoint's;
// DeckError naming the first that differs. Free to change: the end (time.steps, tolerance,
// max_iterations), the cadence of output, diagnostics, printing and checkpoints, the kernel,
// the ranks ([mpi]) and where the run writes ([run] name, [output]).
void check_restart_deck(const Deck& deck, const Checkpoint& checkpoint, const Schema& schema);

// A restart in the folder that holds its checkpoint continues it: rank 0 removes the step files
// (`<basename>_<n>.h5`) from the checkpoint's step on, which the restart writes again where they
// are due, the checkpoints after it, which belong to the abandoned continuation, and the `.h5.tmp`
// files a run killed while writing left. Collective.
void forget_after(const std::filesystem::path& dir, const std::string& basename, std::int64_t step,
                  MPI_Comm comm);

}  // namespace kstencil
