#pragma once
// Building deck schemas: a fluent row builder and the keys every solver shares (run, grid spacing,
// kernel traits, output), so that they read and check the same way in every deck.
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
  operator KeySpec() const { return spec_; }

 private:
  KeySpec spec_;
};

// The solvers a deck may name in [run] solver.
inline const std::vector<std::string>& solver_names() {
  static const std::vector<std::string> names = {"laplacian", "fdtd", "jacobi", "cg"};
  return names;
}

// [run] name, solver, precision.
inline std::vector<KeySpec> run_keys(const std::string& solver) {
  using T = KeyType;
  return {Key("run", "name", T::string, R"("")",
              "run name: output folder outputs/<name> (empty = the deck file's stem)"),
          Key("run", "solver", T::string, "\"" + solver + "\"", "solver that runs the deck")
              .choices(solver_names()),
          Key("run", "precision", T::string, R"("double")",
              "floating-point type of the fields and the kernel arithmetic")
              .choices({"double", "float"})};
}

// [grid] hx, hy, hz, origin.
inline std::vector<KeySpec> spacing_keys() {
  using T = KeyType;
  return {
      Key("grid", "hx", T::real, "1.0", "grid spacing along x").min_exclusive(0),
      Key("grid", "hy", T::real, "1.0", "grid spacing along y").min_exclusive(0),
      Key("grid", "hz", T::real, "1.0", "grid spacing along z").min_exclusive(0),
      Key("grid", "origin", T::real3, "[0.0, 0.0, 0.0]", "coordinates (x y z) of the first point")};
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
          "solver tunes it)")
          .min(0),
      Key("kernel", "launch_bounds", auto_launch_bounds ? T::integer_or_auto : T::integer,
          auto_launch_bounds ? R"("auto")" : "0",
          "maximum threads per block promised to the compiler (Kokkos::LaunchBounds); 0 = none" +
              std::string(auto_launch_bounds ? ", auto = the kernel's default" : ""))
          .int_choices({0, 128, 256, 512, 1024})};
}

// [output] root, enabled, fields, overwrite.
inline std::vector<KeySpec> output_keys() {
  using T = KeyType;
  return {Key("output", "root", T::string, R"("outputs")", "folder that holds the run folders"),
          Key("output", "enabled", T::boolean, "true",
              "write a run folder: summary.json, the resolved deck and (with fields) HDF5 + XDMF"),
          Key("output", "fields", T::boolean, "true",
              "write the fields as HDF5 + XDMF (false: figures only, e.g. for benchmarks)"),
          Key("output", "overwrite", T::boolean, "false",
              "replace an existing run folder (also: kstencil run --overwrite)")};
}

// [mpi] dims, overlap.
inline std::vector<KeySpec> mpi_keys() {
  using T = KeyType;
  return {Key("mpi", "dims", T::integer3, "[0, 0, 0]",
              "ranks along x y z (product = the ranks of mpirun); 0 = chosen to exchange the "
              "fewest points")
              .min(0),
          Key("mpi", "overlap", T::boolean_or_auto, R"("auto")",
              "update the interior while the halo faces are in flight, then the boundary shell; "
              "auto = the backend's default (docs/PERFORMANCE.md)")};
}

// Concatenates schema pieces in order.
inline Schema join_keys(std::initializer_list<std::vector<KeySpec>> pieces) {
  Schema out;
  for (const auto& piece : pieces) out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

}  // namespace kstencil
