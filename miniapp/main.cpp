// kstencil: run stencil decks, describe the machine, list deck keys.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>

#include "cg/cg_run.hpp"
#include "core/deck.hpp"
#include "core/deck_keys.hpp"
#include "core/exec_space.hpp"
#include "core/interrupt.hpp"
#include "core/memory.hpp"
#include "core/output.hpp"
#include "core/timing.hpp"
#include "fdtd/fdtd_deck.hpp"
#include "fdtd/fdtd_run.hpp"
#include "jacobi/jacobi_run.hpp"
#include "kstencil/version.hpp"
#include "laplacian/laplacian_deck.hpp"
#include "laplacian/laplacian_run.hpp"
#include "poisson/poisson_deck.hpp"
#include "sweep/spec.hpp"
#include "sweep/sweep.hpp"

namespace {

using namespace kstencil;

const std::map<std::string, SolverEntry>& solvers() {
  static const std::map<std::string, SolverEntry> registry = {
      {"laplacian", {laplacian_schema, check_laplacian_deck, run_laplacian_deck}},
      {"fdtd", {fdtd_schema, check_fdtd_deck, run_fdtd_deck}},
      {"jacobi", {jacobi_schema, check_jacobi_deck, run_jacobi_deck}},
      {"cg", {cg_schema, check_cg_deck, run_cg_deck}}};
  return registry;
}

// The solver a deck names in [run] solver; an unknown name is left to the schema's check.
std::string solver_of(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string name = peek_deck_string(path, overrides, "run", "solver", "laplacian");
  return solvers().count(name) ? name : "laplacian";
}

int run_command(const std::string& deck_path, std::vector<std::string> overrides, bool overwrite,
                const std::string& restart) {
  if (overwrite) overrides.push_back("output.overwrite=true");
  const std::string name = solver_of(deck_path, overrides);
  const SolverEntry& solver = solvers().at(name);
  const Deck deck = Deck::load(deck_path, overrides, solver.schema());
  if (!restart.empty() && name == "laplacian")
    throw DeckError(deck_path + ": --restart " + restart +
                    ": the laplacian solver keeps no state between its timed applications, so it "
                    "has no checkpoints; allowed: --restart with an fdtd, jacobi or cg deck");
  RunContext context;
  context.restart = restart;
  return solver.run(deck, deck_path, context);
}

// Under mpirun: every rank's host and device, gathered to rank 0.
void print_ranks(const ExecLimits& limits) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks == 1) return;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  std::string mine = std::string(host) + ", " + limits.device_name +
                     (limits.gpu ? " (device " + std::to_string(limits.device_id) + ")" : "");
  mine.resize(256, '\0');
  std::vector<char> all(rank == 0 ? 256 * static_cast<std::size_t>(ranks) : 0);
  MPI_Gather(mine.data(), 256, MPI_CHAR, all.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int r = 0; rank == 0 && r < ranks; ++r)
    std::printf("rank %-4d               %s\n", r, all.data() + 256 * static_cast<std::size_t>(r));
}

int info_command() {
  const ExecLimits limits = default_exec_limits();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  print_ranks(limits);
  if (rank != 0) return 0;
  auto dims = [](const auto& v) {
    return std::to_string(v[0]) + " x " + std::to_string(v[1]) + " x " + std::to_string(v[2]);
  };
  std::cout << "kstencil " << program_version << "\n"
            << "Kokkos version          " << kokkos_version_string() << "\n"
            << "enabled backends        " << enabled_backends() << "\n"
            << "default execution space " << limits.backend << "\n"
            << "device                  " << limits.device_name << "\n"
            << "concurrency             " << limits.concurrency << "\n"
            << "resident threads        " << limits.resident_threads << "\n"
            << "last-level cache        "
            << (limits.llc_bytes ? std::to_string(limits.llc_bytes / 1024) + " KiB" : "unknown")
            << "\n";
  if (!limits.gpu)
    std::cout << "core cache (L2)         "
              << (limits.core_cache_bytes ? std::to_string(limits.core_cache_bytes / 1024) + " KiB"
                                          : "unknown")
              << "\n"
              << "core L1 data cache      "
              << (limits.core_l1d_bytes ? std::to_string(limits.core_l1d_bytes / 1024) + " KiB"
                                        : "unknown")
              << "\n"
              << "hardware threads        " << limits.host_hardware_threads << "\n";
  if (limits.gpu)
    std::cout << "max threads per block   " << limits.max_threads_per_block << "\n"
              << "max block dims (x y z)  " << dims(limits.max_block_dims) << "\n"
              << "max grid dims (x y z)   " << dims(limits.max_grid_dims) << "\n";
  const std::int64_t elements = std::int64_t(1) << 25;
  const CopyBandwidth copy = measure_copy_bandwidth(elements, 8, 2, 10);
  std::printf("copy bandwidth          %.1f GB/s (kernel %.1f, deep_copy %.1f; 2 x %lld doubles)\n",
              copy.gbs, copy.kernel_gbs, copy.deep_copy_gbs, static_cast<long long>(elements));
  return 0;
}

}  // namespace

// Several ranks of one node share its GPUs by node-local rank, unless the user chose a device.
std::vector<char*> with_device_of_local_rank(int argc, char* argv[], std::string& flag) {
  std::vector<char*> args(argv, argv + argc);
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    for (const char* chosen : {"--kokkos-device", "--kokkos-ndevices", "--kokkos-num-devices",
                               "--kokkos-map-device-id-by"})
      if (arg.rfind(chosen, 0) == 0) return args;
  }
  const int gpus = visible_gpu_count();
  if (gpus == 0 || std::getenv("KOKKOS_DEVICE_ID")) return args;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  flag = "--kokkos-device-id=" + std::to_string(local_rank % gpus);
  args.push_back(flag.data());
  return args;
}

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  count_ranks_on_node();
  install_interrupt_handlers();
  int status = 0, world_rank = 0, world_ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_ranks);
  std::string device_flag;
  std::vector<char*> kokkos_args = with_device_of_local_rank(argc, argv, device_flag);
  // --help is kstencil's (its help names Kokkos' flags): Kokkos would print its own first.
  const auto help = std::find_if(kokkos_args.begin(), kokkos_args.end(),
                                 [](const char* a) { return std::string(a) == "--help"; });
  const bool asked_help = help != kokkos_args.end();
  if (asked_help) kokkos_args.erase(help);
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);
  // Removes the --kokkos-* flags it knows from the arguments.
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
  argc = kokkos_argc;
  argv = kokkos_args.data();
  {
    // A --kokkos-* flag this Kokkos does not know (e.g. --kokkos-num-threads before 3.7) is left in
    // argv: say so rather than fail on it.
    std::vector<char*> args;
    for (int a = 0; a < argc; ++a) {
      if (a > 0 && std::string(argv[a]).rfind("--kokkos-", 0) == 0) {
        std::fprintf(stderr, "kstencil: warning: Kokkos %s does not know %s (ignored)\n",
                     kokkos_version_string().c_str(), argv[a]);
        continue;
      }
      args.push_back(argv[a]);
    }
    static char help_flag[] = "--help";
    if (asked_help) args.push_back(help_flag);
    CLI::App app{"kstencil: Kokkos stencil mini-app (Laplacian, FDTD, Jacobi, CG)", "kstencil"};
    app.set_version_flag("--version", std::string("kstencil ") + program_version + " (Kokkos " +
                                          kokkos_version_string() + ")");
    app.require_subcommand(1);
    app.footer(
        "Kokkos flags pass through: --kokkos-num-threads=N (--kokkos-threads=N before Kokkos "
        "3.7), --kokkos-device-id=N, ...");

    std::string deck_path;
    std::vector<std::string> overrides;
    bool overwrite = false;
    auto* run = app.add_subcommand("run", "Run an input deck");
    run->add_option("deck", deck_path, "TOML input deck")->required();
    run->add_option("overrides", overrides, "section.key=value changes to the deck");
    run->add_flag("--overwrite", overwrite, "Replace an existing run folder (output.overwrite)");
    std::string restart;
    run->add_option("--restart", restart,
                    "Continue from a checkpoint (FDTD, Jacobi, CG: [checkpoint], or a run stopped "
                    "by a signal); the deck must define the same problem");
    auto* info = app.add_subcommand(
        "info", "Describe Kokkos, the execution space and its limits; measure copy bandwidth");
    SweepOptions sweep_options;
    auto* sweep = app.add_subcommand(
        "sweep", "Verify and time every configuration of a parameter space; rank them");
    sweep->add_option("deck", sweep_options.deck_path, "TOML input deck (its [sweep] table)")
        ->required();
    sweep->add_option("overrides", sweep_options.overrides,
                      "section.key=value changes to the deck, sweep.key=value to the sweep");
    sweep
        ->add_option(
            "--vary", sweep_options.vary,
            "key=v1,v2,...: values of a deck key to try (repeatable; k1,k2=[a1,a2],[b1,b2] "
            "sets keys together)")
        ->allow_extra_args(false);  // one value per --vary: the deck's overrides may follow
    sweep->add_option("--tiles", sweep_options.tiles,
                      "MIN:MAX: vary kernel.tile over the power-of-two tiles of MIN to MAX work "
                      "items (and Kokkos' default [0, 0, 0])");
    sweep->add_flag("--replot", sweep_options.replot,
                    "Write the folder's tables, plots and best.toml from its cache; run nothing");
    sweep->add_flag("--dry-run", sweep_options.dry_run,
                    "List the configurations and which the device rejects; run and write nothing");
    sweep->add_flag("--overwrite", sweep_options.overwrite,
                    "Start afresh in an existing sweep folder (default: resume it)");
    std::string keys_solver = "laplacian";
    auto* keys = app.add_subcommand("keys", "List every deck key as a Markdown table");
    std::vector<std::string> key_tables = solver_names();
    key_tables.push_back("sweep");
    keys->add_option("solver", keys_solver, "Solver whose keys to list (or sweep: [sweep]'s own)")
        ->check(CLI::IsMember(key_tables));

    try {
      app.parse(static_cast<int>(args.size()), args.data());
      if (run->parsed()) status = run_command(deck_path, overrides, overwrite, restart);
      if (sweep->parsed()) {
        const std::string name =
            solver_of(sweep_options.deck_path, deck_overrides(sweep_options.overrides));
        status = run_sweep(sweep_options, name, solvers().at(name), MPI_COMM_WORLD);
      }
      if (info->parsed()) status = info_command();
      if (keys->parsed())
        std::cout << schema_markdown(keys_solver == "sweep" ? sweep_schema()
                                                            : solvers().at(keys_solver).schema());
    } catch (const CLI::ParseError& e) {
      // --help and --version end here with 0; a bad command line is bad input (2), as a bad deck.
      status = app.exit(e) == 0 ? 0 : 2;
    } catch (const DeckError& e) {
      // Found alike on every rank (agreed_setup): said once.
      if (world_rank == 0) std::fprintf(stderr, "kstencil: error: %s\n", e.what());
      status = 2;
    } catch (const OutputError& e) {
      if (world_rank == 0) std::fprintf(stderr, "kstencil: error: %s\n", e.what());
      status = 2;
    } catch (const std::exception& e) {
      // Possibly this rank alone, while the others wait in a collective: end them all.
      if (world_ranks > 1) {
        std::fprintf(stderr, "kstencil: error on rank %d of %d: %s\n", world_rank, world_ranks,
                     e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
      std::fprintf(stderr, "kstencil: error: %s\n", e.what());
      status = 3;
    }
  }
  // A run (or sweep) that a signal stopped early, after writing what was due: every rank's status
  // says so, not only that of the rank the signal reached (every rank gets here: the others abort).
  int stopped = interrupt_signal() != 0;
  MPI_Allreduce(MPI_IN_PLACE, &stopped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (stopped != 0 && status == 0) status = interrupted_status;
  ignore_interrupts();
  // A run that failed before writing anything leaves no folder behind.
  if (status != 0 && world_rank == 0) remove_empty_output_folders();
  Kokkos::finalize();
  MPI_Finalize();
  return status;
}
