#include "poisson/poisson_output.hpp"

#include <sstream>

#include "core/exec_space.hpp"
#include "kstencil/version.hpp"

namespace kstencil {

void report_solve(RunReport& report, const Grid& g, const std::string& precision,
                  const std::string& grid_details, double tolerance, std::int64_t max_iterations,
                  const PoissonSolve& solve) {
  const SolveResult& r = solve.result;
  report.fact("precision", precision)
      .fact("grid", g.points)
      .fact("spacing", g.spacing)
      .fact("tolerance", tolerance)
      .fact("max_iterations", max_iterations)
      .fact("iterations", r.iterations)
      .fact("error", r.error)
      .fact("converged", r.converged)
      .fact("solve_s", solve.seconds)
      .fact("interrupted", r.interrupted);
  report
      .line("grid", std::to_string(g.points[0]) + " x " + std::to_string(g.points[1]) + " x " +
                        std::to_string(g.points[2]) + ", " + precision + ", " + grid_details)
      .line("solve", std::to_string(r.iterations) + " iterations, error " + fmt("%.6g", r.error) +
                         (r.converged ? " (converged)" : " (not converged)") + ", " +
                         fmt("%.4g", solve.seconds) + " s");
}

void write_poisson_output(RunReport& report, const Deck& deck, const RunFolder& folder,
                          const PoissonRunOutput& out, MPI_Comm comm) {
  const Grid& g = out.grid;
  const SolveResult& result = *out.result;
  if (folder.enabled && deck.boolean("output", "fields")) {
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
                             {"deck", deck.resolved_toml()}};
    attributes.insert(attributes.end(), out.attributes.begin(), out.attributes.end());
    OutputSeries series(folder.dir, folder.name, attributes, comm);
    series.write_step(result.iterations, static_cast<double>(result.iterations),
                      {FieldData{"u", FieldGeometry{g.points, g.origin, g.spacing, g.owned},
                                 out.solution, out.single_precision}});
  }
  std::ostringstream history;
  history.precision(17);
  history << "iteration,error\n";
  for (const auto& h : result.history) history << h.iteration << "," << h.error << "\n";
  report.file("history.csv", history.str());
  if (!result.history.empty())
    report.plot(
        {"history.csv",
         "convergence.png",
         "iteration",
         {"error"},
         (out.solver == "cg" ? "CG" : "Jacobi") + std::string(" convergence (") + folder.name + ")",
         "iteration",
         "error ||b - A u|| / (d sqrt(N)) = RMS Jacobi change",
         true});
  if (folder.enabled) report.line("output", folder.dir.string() + "/");
}

}  // namespace kstencil
