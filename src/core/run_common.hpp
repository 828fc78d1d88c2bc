#pragma once
// Plumbing every solver's run shares: the [mpi] configuration, the run name, the error text for
// tiles a device cannot run, number formatting, and the dispatch from runtime precision and layout
// to the typed run.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "arch/prefetch.hpp"
#include "core/checkpoint.hpp"
#include "core/deck.hpp"
#include "core/decomposition.hpp"
#include "core/exec_space.hpp"
#include "core/mapping.hpp"
#include "core/output.hpp"
#include "core/peer_memory.hpp"
#include "core/timing.hpp"

namespace kstencil {

// kernel.prefetch_into where the deck names a cache; nullopt for "auto" (l1).
inline std::optional<PrefetchInto> requested_prefetch_into(const Deck& deck) {
  return parse_prefetch_into(deck.string("kernel", "prefetch_into"));
}

// Refuses a kernel.prefetch_into the rows would ignore: the kernel does not prefetch, or
// kernel.prefetch is 0. which: the kernels that do ("line prefetches").
inline void check_prefetch_into(const Deck& deck, const Prefetch& prefetch, const bool prefetches,
                                const std::string& kernel,
                                const std::string& which = "line prefetches") {
  if (!requested_prefetch_into(deck)) return;
  if (!prefetches)
    throw deck.error("kernel", "prefetch_into",
                     "not valid for " + kernel + ": only " + which + ", on x86 hosts with AVX",
                     "\"auto\" for " + kernel);
  if (prefetch.bytes == 0)
    throw deck.error("kernel", "prefetch_into", "kernel.prefetch = 0 prefetches nothing",
                     "\"auto\" while kernel.prefetch is 0");
}

// What [mpi] asks for, checked against the grid and the ranks.
struct MpiConfig {
  Dims3 dims{1, 1, 1};
  int rank = 0, ranks = 1;
  bool overlap = false;
  HaloTransport transport = HaloTransport::automatic;
  // This rank's part of `whole` (owned box, ghost layers towards its neighbours).
  Grid local_grid(const Grid& whole) const { return part_of(whole, dims, coords_of(rank, dims)); }
};

// [mpi] for `ranks` ranks over `points` (DeckError naming the grid, the dims and what would be
// valid). Overlap "auto": on for GPUs, whose kernels run while the host waits for MPI; off on
// hosts, where the threads that would update the interior are the ones waiting.
inline MpiConfig mpi_config_from_deck(const Deck& deck, const Index3& points, int rank, int ranks,
                                      Layout layout, const ExecLimits& limits) {
  const auto requested = deck.integer3("mpi", "dims");
  const ProcessGridChoice choice =
      choose_process_grid(points,
                          {static_cast<int>(std::min<std::int64_t>(requested[0], 1 << 30)),
                           static_cast<int>(std::min<std::int64_t>(requested[1], 1 << 30)),
                           static_cast<int>(std::min<std::int64_t>(requested[2], 1 << 30))},
                          ranks, layout);
  if (choice.problem)
    throw deck.error("mpi", "dims",
                     *choice.problem + " (grid " + format_triple(points) + ", " +
                         std::to_string(ranks) + (ranks == 1 ? " rank)" : " ranks)"),
                     choice.allowed);
  MpiConfig config;
  config.dims = choice.dims;
  config.rank = rank;
  config.ranks = ranks;
  config.overlap = deck.is_auto("mpi", "overlap") ? limits.gpu : deck.boolean("mpi", "overlap");
  const std::string halo = deck.string("mpi", "halo");
  config.transport = halo == "peer"  ? HaloTransport::peer
                     : halo == "mpi" ? HaloTransport::mpi
                                     : HaloTransport::automatic;
  if (config.transport == HaloTransport::peer && !peer::available())
    throw deck.error("mpi", "halo",
                     "peer copies need a CUDA build (this is " + limits.backend + ")",
                     "\"auto\" or \"mpi\" here");
  return config;
}

// Runs a solver's set-up on every rank: a DeckError on any rank (a plan may depend on the rank's
// box) is thrown on every rank, with the lowest failing rank's message.
template <class Make>
auto agreed_setup(MPI_Comm comm, Make&& make) -> decltype(make()) {
  std::optional<decltype(make())> result;
  std::string error;
  try {
    result.emplace(make());
  } catch (const DeckError& e) {
    error = e.what();
  }
  const std::string agreed = agreed_error(error, comm);
  if (!agreed.empty()) throw DeckError(agreed);
  return std::move(*result);
}

// The test-only hook of the sweep's tests: KSTENCIL_TEST_CORRUPT="section.key=value" makes a run
// whose deck has that value change one point of its kernel's result before verification (only
// the Laplacian does), so that the verification must catch it.
inline bool corruption_requested(const Deck& deck) {
  const char* hook = std::getenv("KSTENCIL_TEST_CORRUPT");
  if (!hook) return false;
  const std::string text = hook;
  const auto dot = text.find('.'), equals = text.find('=');
  if (dot == std::string::npos || equals == std::string::npos || equals < dot) return false;
  const auto bare = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return s;
  };
  try {
    return bare(deck.value_literal(text.substr(0, dot), text.substr(dot + 1, equals - dot - 1))) ==
           bare(text.substr(equals + 1));
  } catch (const std::exception&) {
    return false;
  }
}

// The slowest rank's median, min and max (the samples stay this rank's).
inline TimingStats slowest_rank(TimingStats t, MPI_Comm comm) {
  t.median_s = global_max(t.median_s, comm);
  t.min_s = global_max(t.min_s, comm);
  t.max_s = global_max(t.max_s, comm);
  return t;
}

// The ranks of comm, as a run report states them.
inline int rank_count(MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  return ranks;
}

// [run] name, or the deck file's stem when it is empty.
inline std::string run_name_of(const Deck& deck, const std::string& deck_path) {
  const std::string name = deck.string("run", "name");
  return name.empty() ? std::filesystem::path(deck_path).stem().string() : name;
}

// The run folder a deck asks for ([output] enabled, root, overwrite), made (or an existing one
// refused) before any time is spent. Collective over comm.
struct RunFolder {
  bool enabled = false;
  std::string name;
  std::filesystem::path dir;  // empty when not enabled
};
// A restart continues the run folder its checkpoint is in, as it is (output.overwrite aside),
// without the files of steps after the checkpoint's; a deck naming another folder is refused (the
// folder's XDMF lists the step files before the checkpoint's).
inline RunFolder open_run_folder(const Deck& deck, const std::string& deck_path, MPI_Comm comm,
                                 const Checkpoint* restart = nullptr) {
  RunFolder folder;
  folder.enabled = deck.boolean("output", "enabled");
  folder.name = run_name_of(deck, deck_path);
  if (!folder.enabled) return folder;
  const std::filesystem::path root = deck.string("output", "root");
  std::error_code ec;
  if (restart) {
    // The folder the checkpoint file is in, links resolved; decided alike on every rank.
    std::filesystem::path file = std::filesystem::canonical(restart->path(), ec);
    if (ec) file = std::filesystem::absolute(restart->path(), ec).lexically_normal();
    const std::filesystem::path from = file.parent_path();
    std::string error;
    if (!std::filesystem::equivalent(from, root / folder.name, ec)) {
      const bool other_name = from.filename().string() != folder.name;
      error = deck.error(other_name ? "run" : "output", other_name ? "name" : "root",
                         "a restart continues the run folder of its checkpoint, " + from.string(),
                         other_name ? "\"" + from.filename().string() + "\" (and output.root = \"" +
                                          from.parent_path().string() + "\")"
                                    : "\"" + from.parent_path().string() + "\"")
                  .what();
    }
    if (const std::string agreed = agreed_error(error, comm); !agreed.empty())
      throw DeckError(agreed);
    bool resumed = false;
    const std::string marker = file.filename().string();
    folder.dir = prepare_output_folder(root, folder.name, false, marker, &resumed, comm);
    forget_after(folder.dir, folder.name, restart->step(), comm);
    return folder;
  }
  folder.dir = prepare_run_directory(root, folder.name, deck.boolean("output", "overwrite"),
                                     deck.resolved_toml(), comm);
  return folder;
}

// The DeckError for a kernel configuration `limits` cannot run (`why` from the solver's check);
// `policy_order` names the policy dimensions the tile is given in, where that helps.
inline DeckError tile_error(const Deck& deck, const ExecLimits& limits, const std::string& why,
                            const std::string& policy_order = "") {
  const std::string allowed =
      limits.gpu
          ? "tiles" + (policy_order.empty() ? "" : " (in policy order " + policy_order + ")") +
                " with at most " + std::to_string(limits.max_threads_per_block) +
                " threads (or kernel.launch_bounds), at most " +
                format_triple({limits.max_block_dims[0], limits.max_block_dims[1],
                               limits.max_block_dims[2]}) +
                " per dimension and at most 65535 blocks along y and z"
          : "positive tile entries, or 0 for Kokkos' default";
  return deck.error("kernel", "tile", "not valid on " + limits.backend + ": " + why, allowed);
}

// printf-style formatting of one number, for summaries.
inline std::string fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// The value type and View layout of a typed run.
template <class T, class KokkosLayout>
struct RunTypes {
  using value_type = T;
  using layout = KokkosLayout;
};

// Calls run(RunTypes<T, KokkosLayout>{}) for the run's precision and layout.
template <class Run>
int run_with_types(bool single_precision, Layout layout, Run&& run) {
  if (single_precision)
    return layout == Layout::left ? run(RunTypes<float, Kokkos::LayoutLeft>{})
                                  : run(RunTypes<float, Kokkos::LayoutRight>{});
  return layout == Layout::left ? run(RunTypes<double, Kokkos::LayoutLeft>{})
                                : run(RunTypes<double, Kokkos::LayoutRight>{});
}

}  // namespace kstencil
