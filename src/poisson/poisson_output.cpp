#include "poisson/poisson_output.hpp"

#include <sstream>

#include "core/exec_space.hpp"
#include "core/plot.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

std::optional<std::string> write_poisson_output(const Deck& deck, const PoissonRunOutput& out,
                                                MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string resolved = deck.resolved_toml();
  const Grid& g = out.grid;
  const SolveResult& result = *out.result;
  if (deck.boolean("output", "fields")) {
    Attributes attributes = {{"kernel", out.solver},
                             {"precision", std::string(out.single_precision ? "float" : "double")},
                             {"grid_dims", g.points},
                             {"origin", g.origin},
                             {"spacing", g.spacing},
                             {"iterations", result.iterations},
                             {"error", result.error},
                             {"backend", default_exec_limits().backend},
                             {"kokkos_version", kokkos_version_string()},
                             {"program_version", std::string(program_version)},
                             {"deck", resolved}};
    attributes.insert(attributes.end(), out.attributes.begin(), out.attributes.end());
    OutputSeries series(out.dir, out.run_name, attributes, comm);
    series.write_step(result.iterations, static_cast<double>(result.iterations),
                      {FieldData{"u", FieldGeometry{g.points, g.origin, g.spacing, g.owned},
                                 out.solution, out.single_precision}});
  }
  std::optional<std::string> plot_problem;
  if (rank == 0) {
    std::ostringstream history;
    history.precision(17);
    history << "iteration,error\n";
    for (const auto& h : result.history) history << h.iteration << "," << h.error << "\n";
    write_file_atomically(out.dir / "history.csv", history.str());
    if (!result.history.empty())
      plot_problem = plot_csv({out.dir / "history.csv",
                               out.dir / "convergence.png",
                               "iteration",
                               {"error"},
                               (out.solver == "cg" ? "CG" : "Jacobi") +
                                   std::string(" convergence (") + out.run_name + ")",
                               "iteration",
                               "error ||b - A u|| / (d sqrt(N)) = RMS Jacobi change",
                               true});
    write_file_atomically(out.dir / "deck.toml", resolved);
    write_file_atomically(out.dir / "summary.json", out.summary.dump(2) + "\n");
  }
  return plot_problem;
}

}  // namespace kstencil
