#pragma once
// What a Jacobi or CG run writes in its run folder: the solution u (HDF5 + XDMF, when
// output.fields), history.csv and convergence.png, the resolved deck and summary.json.
#include <mpi.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/deck.hpp"
#include "core/output.hpp"
#include "poisson/poisson.hpp"

namespace kstencil {

struct PoissonRunOutput {
  std::filesystem::path dir;
  std::string run_name;
  std::string solver;  // "jacobi" or "cg": the plot's title and the HDF5 "kernel" attribute
  Grid grid;
  const void* solution = nullptr;  // x fastest, every point
  bool single_precision = false;
  const SolveResult* result = nullptr;
  Attributes attributes;  // solver-specific HDF5 attributes (layout, norm, ...)
  nlohmann::ordered_json summary;
};

// Collective over comm. Returns why the convergence plot was skipped, if it was.
std::optional<std::string> write_poisson_output(const Deck& deck, const PoissonRunOutput& out,
                                                MPI_Comm comm);

}  // namespace kstencil
