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
      .line("solve", std::to_string(r.iterations) +
                         (r.iterations == 1 ? " iteration" : " iterations") + ", error " +
                         fmt("%.6g", r.error) +
                         (r.converged ? " (converged)" : " (not converged)") + ", " +
                         fmt("%.4g", solve.seconds) + " s");
}

nlohmann::json solve_state(const SolveResult& result) {
  nlohmann::json history = nlohmann::json::array();
  for (const ErrorRecord& r : result.history) history.push_back({r.iteration, exact_json(r.error)});
  return {
      {"iterations", result.iterations}, {"error", exact_json(result.error)}, {"history", history}};
}

SolveResult solve_result_of(const nlohmann::json& state) {
  SolveResult result;
  result.iterations = state.at("iterations").get<std::int64_t>();
  result.error = exact_double(state.at("error"));
  for (const auto& r : state.at("history"))
    result.history.push_back({r.at(0).get<std::int64_t>(), exact_double(r.at(1))});
  return result;
}

FieldData grid_field(const std::string& name, const Grid& g, const void* values,
                     bool single_precision) {
  return {name, FieldGeometry{g.points, g.origin, g.spacing, g.owned}, values, single_precision};
}

void write_poisson_output(RunReport& report, const Deck& deck, const RunFolder& folder,
                          const PoissonRunOutput& out, MPI_Comm comm) {
  const Grid& g = out.grid;
  const SolveResult& result = *out.result;
  if (folder.enabled && deck.boolean("output", "fields") && !result.interrupted) {
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
    series.write_step(
        result.iterations, static_cast<double>(result.iterations),
        std::vector<FieldData>{grid_field("u", g, out.solution, out.single_precision)});
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
