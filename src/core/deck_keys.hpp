#pragma once
// Building deck schemas: a fluent row builder and the keys every solver shares (run, grid spacing,
// kernel traits, output), so that they read and check the same way in every deck.
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/deck.hpp"

namespace kstencil {

class Key {
 public:
  Key(std::string section, std::string key, KeyType type, std::string default_toml,
      std::string help) {
    spec_.section = std::move(section);
    spec_.key = std::move(key);
    spec_.type = type;
    spec_.default_toml = std::move(default_toml);
    spec_.help = std::move(help);
  }
  Key& choices(std::vector<std::string> words) {
    spec_.choices = std::move(words);
    return *this;
  }
  Key& int_choices(std::vector<std::int64_t> values) {
    spec_.int_choices = std::move(values);
    return *this;
  }
  Key& min(double value) {
    spec_.min = value;
    return *this;
  }
  Key& min_exclusive(double value) {
    spec_.min = value;
    spec_.min_exclusive = true;
    return *this;
  }
  Key& max(double value) {
    spec_.max = value;
    return *this;
  }
  Key& max_exclusive(double value) {
    spec_.max = value;
    spec_.max_exclusive = true;
    return *this;
  }
  Key& retired_choice(std::string word, std::string instead) {
    spec_.retired_choices.emplace_back(std::move(word), std::move(instead));
    return *this;
  }
  // A removed key: a deck that sets it gets `instead`.
  Key& retired(std::string instead) {
    spec_.retired = std::move(instead);
    return *this;
  }
  Key& because(std::string reason) {
    spec_.range_reason = std::move(reason);
    return *this;
  }
  Key& check(std::string (*what_is_wrong)(const std::string&), std::string allowed) {
    spec_.string_check = what_is_wrong;
    spec_.allowed_text = std::move(allowed);
    return *this;
  }
  Key& deck_check(void (*check)(const Deck&)) {
    spec_.deck_check = check;
    return *this;
  }
  // Any 64-bit value (integer keys are otherwise at most 2^31 - 1: the program reads most into
  // int counts and indices).
  Key& wide() {
    wide_ = true;
    return *this;
  }
  operator KeySpec() const {
    KeySpec spec = spec_;
    const bool integers = spec.type == KeyType::integer || spec.type == KeyType::integer_or_auto ||
                          spec.type == KeyType::integer3;
    if (integers && !wide_ && !spec.max && spec.int_choices.empty()) spec.max = 2147483647.0;
    return spec;
  }

 private:
  KeySpec spec_;
  bool wide_ = false;
};

// The solvers a deck may name in [run] solver.
inline const std::vector<std::string>& solver_names() {
  static const std::vector<std::string> names = {"laplacian", "fdtd", "jacobi", "cg"};
  return names;
}

// [run] name, solver, precision.
inline std::vector<KeySpec> run_keys(const std::string& solver) {
  using T = KeyType;
  // Checked here, before any folder is made: the name becomes a folder under [output] root.
  const auto name_check = [](const std::string& name) {
    return name.empty() ? std::string() : run_name_problem(name);
  };
  return {Key("run", "name", T::string, R"("")",
              "run name: output folder outputs/<name> (empty = the deck file's stem)")
              .check(name_check, "\"\" (the deck file's stem) or " + run_name_allowed()),
          Key("run", "solver", T::string, "\"" + solver + "\"", "solver that runs the deck")
              .choices(solver_names()),
          Key("run", "precision", T::string, R"("double")",
              "floating-point type of the fields and the kernel arithmetic")
              .choices({"double", "float"})};
}

// [grid] hx, hy, hz, origin.
inline std::vector<KeySpec> spacing_keys() {
  using T = KeyType;
  // The kernels' coefficients 1/h^2 (and FDTD's time step) must stay normal numbers in float.
  const std::string why = "1/h^2 must be a normal number in single precision";
  return {
      Key("grid", "hx", T::real, "1.0", "grid spacing along x").min(1e-15).max(1e15).because(why),
      Key("grid", "hy", T::real, "1.0", "grid spacing along y").min(1e-15).max(1e15).because(why),
      Key("grid", "hz", T::real, "1.0", "grid spacing along z").min(1e-15).max(1e15).because(why),
      Key("grid", "origin", T::real3, "[0.0, 0.0, 0.0]", "coordinates (x y z) of the first point")};
}

// A tile's work items (its non-zero entries' product) must count in an int, as Kokkos and the
// devices count them; an entry 2^63 - 1 would overflow the product itself.
inline void check_tile_size(const Deck& deck) {
  const auto tile = deck.integer3("kernel", "tile");
  double items = 1;  // in double: the product of three int64 may overflow
  for (const auto t : tile) items *= t > 0 ? static_cast<double>(t) : 1.0;
  if (items > 2147483647.0)
    throw deck.error("kernel", "tile", "too many work items per work group",
                     "3 integers >= 0 whose non-zero entries multiply to at most 2147483647 (0 = "
                     "the kernel's default for that axis)");
}

// [kernel] layout, iterate, tile, launch_bounds (auto_launch_bounds: "auto", the kernel's default
// on this backend, is the default; else 0, none).
inline std::vector<KeySpec> kernel_trait_keys(bool auto_launch_bounds = false) {
  using T = KeyType;
  return {
      Key("kernel", "layout", T::string, R"("right")",
          "Kokkos View layout of the fields: left = x contiguous, right = z contiguous")
          .choices({"left", "right"}),
      Key("kernel", "iterate", T::string, R"("auto")",
          "MDRange iteration order; auto = the contiguous index fastest on the execution space")
          .choices({"auto", "left", "right"}),
      Key("kernel", "tile", T::integer3, "[0, 0, 0]",
          "work items per work group (GPU thread block, host tile) along x y z, whatever each "
          "work item covers; 0 = the kernel's default for that axis (Kokkos' unless the "
          "solver tunes it); at most 2147483647 work items in all")
          .min(0)
          .deck_check(check_tile_size),
      Key("kernel", "launch_bounds", auto_launch_bounds ? T::integer_or_auto : T::integer,
          auto_launch_bounds ? R"("auto")" : "0",
          "maximum threads per block promised to the compiler (Kokkos::LaunchBounds); 0 = none" +
              std::string(auto_launch_bounds ? ", auto = the kernel's default" : ""))
          .int_choices({0, 128, 256, 512, 1024})};
}

// [kernel] blocks_per_item of the solvers that run the Laplacian's blocked kernel; `applies` says
// when (one meaning everywhere).
inline KeySpec blocks_per_item_key(const std::string& applies) {
  return Key("kernel", "blocks_per_item", KeyType::integer_or_auto, R"("auto")",
             applies +
                 ": m x m_slow blocks a work item updates one after another along the slowest "
                 "axis (the rows they share come from the L1); auto = the kernel's default (on "
                 "GPUs 2 where the rows hold runs of 2 or 4 values, else 3 or 4)")
      .min(1);
}

// [kernel] prefetch of the solvers whose line kernel prefetches its rows' streams on hosts.
inline KeySpec prefetch_key() {
  return Key("kernel", "prefetch", KeyType::integer_or_auto, R"("auto")",
             "line (and FDTD's fused) on x86 hosts with AVX: bytes ahead at which each row "
             "prefetches the streams it reads from memory (into the cache kernel.prefetch_into "
             "names); 0 = no software prefetch (the hardware prefetchers alone); auto = the "
             "kernel's default where it prefetches, else 0: Laplacian 2048 (4096 for one-plane "
             "AVX rows), FDTD 2048 where a core's L1 data cache holds at least 48 KiB or "
             "kernel.prefetch_into names a cache, else 0 (the best distance depends on the CPU: "
             "docs/PERFORMANCE.md)")
      .int_choices({0, 256, 512, 1024, 2048, 4096});
}

// [kernel] prefetch_into, beside prefetch_key.
inline KeySpec prefetch_into_key() {
  return Key("kernel", "prefetch_into", KeyType::string, R"("auto")",
             "line (and FDTD's fused) on x86 hosts with AVX, where it prefetches: the cache its "
             "prefetches of the streams from memory fill; l1 = kernel.prefetch bytes ahead into "
             "the L1, l2 = into the L2 only, both = into the L1 and twice as far into the L2; "
             "auto = l1 (which one moves more depends on the CPU: docs/PERFORMANCE.md)")
      .choices({"auto", "l1", "l2", "both"});
}

// [output] root, enabled, fields, overwrite.
inline std::vector<KeySpec> output_keys() {
  using T = KeyType;
  // A NUL would cut the path short behind the message's back; "" would mean the current folder
  // without saying so.
  const auto root_check = [](const std::string& root) -> std::string {
    if (root.empty()) return "empty";
    // root/name (up to 200 bytes)/file must fit in the 4096 bytes Linux allows for a path.
    if (root.size() > 3800) return std::to_string(root.size()) + " bytes long";
    for (const char c : root)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "contains a control character";
    return "";
  };
  return {Key("output", "root", T::string, R"("outputs")", "folder that holds the run folders")
              .check(root_check,
                     "a folder path of at most 3800 bytes without control characters (\".\" for "
                     "the current folder)"),
          Key("output", "enabled", T::boolean, "true",
              "write a run folder: summary.json, the resolved deck and (with fields) HDF5 + XDMF"),
          Key("output", "fields", T::boolean, "true",
              "write the fields as HDF5 + XDMF (false: figures only, e.g. for benchmarks)"),
          Key("output", "overwrite", T::boolean, "false",
              "replace an existing run folder (also: kstencil run --overwrite)")};
}

// [mpi] dims, overlap, halo.
inline std::vector<KeySpec> mpi_keys() {
  using T = KeyType;
  return {Key("mpi", "dims", T::integer3, "[0, 0, 0]",
              "ranks along x y z (product = the ranks of mpirun); 0 = chosen to exchange the "
              "fewest points")
              .min(0),
          Key("mpi", "overlap", T::boolean_or_auto, R"("auto")",
              "update the interior while the halo faces are in flight, then the boundary shell; "
              "auto = the backend's default (docs/PERFORMANCE.md)"),
          Key("mpi", "halo", T::string, R"("auto")",
              "how faces travel between GPU ranks: peer = device-to-device copies into the "
              "neighbour's memory (CUDA IPC; ranks of one node), mpi = MPI messages (staged "
              "through pinned host memory unless MPI is GPU-aware), auto = peer where the "
              "neighbour shares the node and the build is CUDA, else mpi")
              .choices({"auto", "peer", "mpi"})};
}

// [checkpoint] every, keep (`unit`: "steps" or "iterations").
inline std::vector<KeySpec> checkpoint_keys(const std::string& unit) {
  using T = KeyType;
  return {Key("checkpoint", "every", T::integer, "0",
              unit + " between checkpoints in the run folder (checkpoint_<n>.h5: the whole state, "
                     "for kstencil run --restart FILE); 0 = only when a signal stops the run")
              .min(0),
          Key("checkpoint", "keep", T::integer, "2",
              "how many of the newest checkpoints the run folder keeps")
              .min(1)
              .max(1000000)};
}

// The most points a grid may have: 2^48, 2 PiB per double field (beyond any machine, but not
// refused for memory here: the run finds out), so that every point and byte count, ghost layers
// included, fits in 64 bits. `extra` points per axis are added to the deck's nx ny nz (FDTD's
// nodes).
inline void check_grid_points(const Deck& deck, std::int64_t extra) {
  constexpr double max_points = 281474976710656.0;
  const auto nx = deck.integer("grid", "nx"), ny = deck.integer("grid", "ny"),
             nz = deck.integer("grid", "nz");
  // In double: the product itself may overflow 64 bits.
  const double points = (static_cast<double>(nx) + static_cast<double>(extra)) *
                        (static_cast<double>(ny) + static_cast<double>(extra)) *
                        (static_cast<double>(nz) + static_cast<double>(extra));
  if (points <= max_points) return;
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", points);
  const std::string noun = extra ? "nodes" : "points";
  throw deck.error("grid", "nx",
                   "a grid of " + std::to_string(nx) + " x " + std::to_string(ny) + " x " +
                       std::to_string(nz) + (extra ? " cells has " : " points has ") + count + " " +
                       noun + ", too many",
                   "nx, ny, nz for at most 2^48 = 281474976710656 " + noun + " in all");
}

// Concatenates schema pieces in order.
inline Schema join_keys(std::initializer_list<std::vector<KeySpec>> pieces) {
  Schema out;
  for (const auto& piece : pieces) out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

}  // namespace kstencil
