// kstencil: run stencil decks, describe the machine, list deck keys.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>

#include "core/deck.hpp"
#include "core/exec_space.hpp"
#include "core/output.hpp"
#include "core/timing.hpp"
#include "kstencil/version.hpp"
#include "laplacian/laplacian_deck.hpp"
#include "laplacian/laplacian_run.hpp"

namespace {

using namespace kstencil;

struct Solver {
  std::function<const Schema&()> schema;
  std::function<int(const Deck&, const std::string&, MPI_Comm)> run;
};

const std::map<std::string, Solver>& solvers() {
  static const std::map<std::string, Solver> registry = {
      {"laplacian", {laplacian_schema, run_laplacian_deck}}};
  return registry;
}

// The solver a deck names in [run] solver (overrides included); the Laplacian if it names none or
// cannot be read, in which case loading the deck reports the problem.
std::string solver_of(const std::string& path, const std::vector<std::string>& overrides) {
  std::string name = "laplacian";
  try {
    const auto table = toml::parse_file(path);
    if (auto value = table["run"]["solver"].value<std::string>()) name = *value;
  } catch (const std::exception&) {
  }
  for (const auto& o : overrides)
    if (o.rfind("run.solver=", 0) == 0) name = o.substr(11);
  return solvers().count(name) ? name : "laplacian";
}

int run_command(const std::string& deck_path, std::vector<std::string> overrides, bool overwrite) {
  if (overwrite) overrides.push_back("output.overwrite=true");
  const Solver& solver = solvers().at(solver_of(deck_path, overrides));
  const Deck deck = Deck::load(deck_path, overrides, solver.schema());
  return solver.run(deck, deck_path, MPI_COMM_WORLD);
}

int info_command() {
  const ExecLimits limits = default_exec_limits();
  auto dims = [](const auto& v) {
    return std::to_string(v[0]) + " x " + std::to_string(v[1]) + " x " + std::to_string(v[2]);
  };
  std::cout << "kstencil " << program_version << "\n"
            << "Kokkos version          " << kokkos_version_string() << "\n"
            << "enabled backends        " << enabled_backends() << "\n"
            << "default execution space " << limits.backend << "\n"
            << "device                  " << limits.device_name << "\n"
            << "concurrency             " << limits.concurrency << "\n"
            << "last-level cache        "
            << (limits.llc_bytes ? std::to_string(limits.llc_bytes / 1024) + " KiB" : "unknown")
            << "\n";
  if (limits.gpu)
    std::cout << "max threads per block   " << limits.max_threads_per_block << "\n"
              << "max block dims (x y z)  " << dims(limits.max_block_dims) << "\n"
              << "max grid dims (x y z)   " << dims(limits.max_grid_dims) << "\n";
  const std::int64_t elements = std::int64_t(1) << 25;
  const CopyBandwidth copy = measure_copy_bandwidth(elements, 8, 2, 10);
  std::printf("copy bandwidth          %.1f GB/s (2 x %lld doubles, median of 10)\n", copy.gbs,
              static_cast<long long>(elements));
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  Kokkos::initialize(argc, argv);  // removes --kokkos-* flags from argv
  {
    CLI::App app{"kstencil: Kokkos stencil mini-app (Laplacian)", "kstencil"};
    app.set_version_flag("--version", std::string("kstencil ") + program_version + " (Kokkos " +
                                          kokkos_version_string() + ")");
    app.require_subcommand(1);
    app.footer("Kokkos flags (--kokkos-num-threads=N, --kokkos-device-id=N, ...) pass through.");

    std::string deck_path;
    std::vector<std::string> overrides;
    bool overwrite = false;
    auto* run = app.add_subcommand("run", "Run an input deck");
    run->add_option("deck", deck_path, "TOML input deck")->required();
    run->add_option("overrides", overrides, "section.key=value changes to the deck");
    run->add_flag("--overwrite", overwrite, "Replace an existing run folder (output.overwrite)");
    auto* info = app.add_subcommand(
        "info", "Describe Kokkos, the execution space and its limits; measure copy bandwidth");
    std::string keys_solver = "laplacian";
    auto* keys = app.add_subcommand("keys", "List every deck key as a Markdown table");
    keys->add_option("solver", keys_solver, "Solver whose keys to list")
        ->check(CLI::IsMember({"laplacian"}));

    try {
      app.parse(argc, argv);
      if (run->parsed()) status = run_command(deck_path, overrides, overwrite);
      if (info->parsed()) status = info_command();
      if (keys->parsed()) std::cout << schema_markdown(solvers().at(keys_solver).schema());
    } catch (const CLI::ParseError& e) {
      status = app.exit(e);
    } catch (const DeckError& e) {
      std::fprintf(stderr, "kstencil: error: %s\n", e.what());
      status = 2;
    } catch (const OutputError& e) {
      std::fprintf(stderr, "kstencil: error: %s\n", e.what());
      status = 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kstencil: error: %s\n", e.what());
      status = 3;
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return status;
}
