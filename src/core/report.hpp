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
#include "core/plot.hpp"
#include "core/run_common.hpp"
#include "core/run_context.hpp"
#include "core/timing.hpp"

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
  // The run's verdict: facts "verified" and "verification" (the details); finish returns 0 when
  // passed, else 1.
  RunReport& verification(bool passed, nlohmann::ordered_json details) {
    passed_ = passed;
    return fact("verified", passed).fact("verification", std::move(details));
  }
  // Fact "timing", what `kstencil sweep` ranks and compares in every solver: the time of one
  // `per` ("launch", "step", "iteration") over the samples, and the figure of merit in GB/s.
  RunReport& timing(const TimingStats& t, const std::string& per, double gbs) {
    return fact("timing", {{"per", per},
                           {"median_s", t.median_s},
                           {"min_s", t.min_s},
                           {"max_s", t.max_s},
                           {"samples", t.samples_s.size()},
                           {"gbs", gbs}});
  }
  // Fact "phases_s" (seconds per phase, in order) and the console line "wall".
  RunReport& phases(const PhaseClock& clock);
  // A line of the console summary, "  label  text" with the labels aligned.
  RunReport& line(const std::string& label, const std::string& text) {
    lines_.emplace_back(label, text);
    return *this;
  }

  // A further file of the run folder (e.g. a CSV of diagnostics), `name` relative to it.
  RunReport& file(const std::string& name, std::string text) {
    files_.emplace_back(name, std::move(text));
    return *this;
  }
  // A plot of one of those files, spec.csv and spec.png relative to the run folder. A plot that
  // cannot be made is skipped with a note on stderr.
  RunReport& plot(PlotSpec spec) {
    plots_.push_back(std::move(spec));
    return *this;
  }

  const nlohmann::ordered_json& summary() const { return summary_; }
  std::string console() const;

  // Rank 0: writes the files, the plots, deck.toml (the resolved deck) and last summary.json into
  // the run folder (each atomically; nothing when the folder is not enabled), then prints the
  // console summary (or hands it and the summary to `context`, when quiet). Returns the exit
  // status: 0 verified, 1 not.
  int finish(const RunFolder& folder, const Deck& deck, MPI_Comm comm,
             const RunContext& context) const;

 private:
  std::string header_;
  bool passed_ = false;
  nlohmann::ordered_json summary_;
  std::vector<std::pair<std::string, std::string>> lines_;
  std::vector<std::pair<std::string, std::string>> files_;
  std::vector<PlotSpec> plots_;
};

}  // namespace kstencil
