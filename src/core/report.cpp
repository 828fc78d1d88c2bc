#include "core/report.hpp"

#include <cstdio>

#include "core/output.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

RunReport::RunReport(const std::string& solver, const ExecLimits& limits, const int ranks) {
  header_ = "kstencil " + std::string(program_version) + " | " + solver + " | " + limits.backend +
            " on " + limits.device_name + " (Kokkos " + kokkos_version_string() + ", concurrency " +
            std::to_string(limits.concurrency) + ", " + std::to_string(ranks) +
            (ranks > 1 ? " ranks)" : " rank)");
  summary_ = {{"kernel", solver},
              {"backend", limits.backend},
              {"device", limits.device_name},
              {"concurrency", limits.concurrency},
              {"ranks", ranks},
              {"kokkos_version", kokkos_version_string()},
              {"program_version", program_version}};
}

RunReport& RunReport::phases(const PhaseClock& clock) {
  nlohmann::ordered_json seconds = nlohmann::ordered_json::object();
  double total = 0;
  std::string parts;
  for (const auto& [name, s] : clock.phases()) {
    seconds[name] = s;
    total += s;
    parts += (parts.empty() ? "" : ", ") + name + " " + fmt("%.3g", s);
  }
  return fact("phases_s", seconds).line("wall", fmt("%.3g", total) + " s to this report: " + parts);
}

std::string RunReport::console() const {
  std::size_t width = 0;
  for (const auto& [label, text] : lines_) width = std::max(width, label.size());
  std::string out = header_ + "\n";
  for (const auto& [label, text] : lines_)
    out += "  " + label + std::string(width + 2 - label.size(), ' ') + text + "\n";
  return out;
}

int RunReport::finish(const RunFolder& folder, const Deck& deck, MPI_Comm comm,
                      const RunContext& context) const {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (context.summary) *context.summary = summary_;
  if (rank != 0) return passed_ ? 0 : 1;
  std::string notes;
  if (folder.enabled) {
    for (const auto& [name, text] : files_) write_file_atomically(folder.dir / name, text);
    for (PlotSpec spec : plots_) {
      spec.csv = folder.dir / spec.csv;
      spec.png = folder.dir / spec.png;
      if (const auto why = plot_csv(spec))
        notes += "kstencil: " + spec.png.stem().string() + " plot skipped: " + *why + "\n";
    }
    write_file_atomically(folder.dir / "deck.toml", deck.resolved_toml());
    write_file_atomically(folder.dir / "summary.json", summary_.dump(2) + "\n");
  }
  if (context.console) *context.console = console();
  if (!context.quiet) std::fputs(console().c_str(), stdout);
  std::fputs(notes.c_str(), stderr);
  std::fflush(stdout);
  return passed_ ? 0 : 1;
}

}  // namespace kstencil
