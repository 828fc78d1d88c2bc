#pragma once
// One report per run: the facts a solver records, in order, rendered both as summary.json and as
// the console summary, and the one way a run folder's deck and summary are written.
#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/deck.hpp"
#include "core/exec_space.hpp"
#include "core/run_common.hpp"

namespace kstencil {

class RunReport {
 public:
  // The header every run has: solver, backend, device, Kokkos and program versions, ranks.
  RunReport(const std::string& solver, const ExecLimits& limits, int ranks);

  // A fact of summary.json.
  RunReport& fact(const std::string& key, nlohmann::ordered_json value) {
    summary_[key] = std::move(value);
    return *this;
  }
  // A line of the console summary, "  label  text" with the labels aligned.
  RunReport& line(const std::string& label, const std::string& text) {
    lines_.emplace_back(label, text);
    return *this;
  }

  const nlohmann::ordered_json& summary() const { return summary_; }
  std::string console() const;

  // Writes deck.toml (the resolved deck) and summary.json into the run folder, atomically (rank 0),
  // and prints the console summary (rank 0).
  void finish(const RunFolder& folder, const Deck& deck, MPI_Comm comm) const;

 private:
  std::string header_;
  nlohmann::ordered_json summary_;
  std::vector<std::pair<std::string, std::string>> lines_;
};

}  // namespace kstencil
