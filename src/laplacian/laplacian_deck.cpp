#include "laplacian/laplacian_deck.hpp"

#include <utility>

namespace kstencil {

namespace {

// A schema row, built up with the allowed values it has.
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
  operator KeySpec() const { return spec_; }

 private:
  KeySpec spec_;
};

}  // namespace

const Schema& laplacian_schema() {
  using T = KeyType;
  static const Schema schema = {
      // [run]
      Key("run", "name", T::string, R"("")",
          "run name: output folder outputs/<name> (empty = the deck file's stem)"),
      Key("run", "solver", T::string, R"("laplacian")", "solver that runs the deck")
          .choices({"laplacian"}),
      Key("run", "precision", T::string, R"("double")",
          "floating-point type of the fields and the kernel arithmetic")
          .choices({"double", "float"}),
      Key("run", "warmup", T::integer, "2", "untimed kernel launches before the timed ones").min(0),
      Key("run", "repeats", T::integer, "10", "timed kernel launches").min(1).max(100000),
      // [grid]
      Key("grid", "nx", T::integer, "128", "grid points along x, boundary included").min(3),
      Key("grid", "ny", T::integer, "128", "grid points along y, boundary included").min(3),
      Key("grid", "nz", T::integer, "128", "grid points along z, boundary included").min(3),
      Key("grid", "hx", T::real, "1.0", "grid spacing along x").min_exclusive(0),
      Key("grid", "hy", T::real, "1.0", "grid spacing along y").min_exclusive(0),
      Key("grid", "hz", T::real, "1.0", "grid spacing along z").min_exclusive(0),
      Key("grid", "origin", T::real3, "[0.0, 0.0, 0.0]", "coordinates (x y z) of the first point"),
      // [kernel]
      Key("kernel", "variant", T::string, R"("auto")",
          "kernel variant; auto = the backend's default configuration (ignores tile, "
          "launch_bounds, m, parts, streaming_stores); line = one work item per line of the "
          "contiguous axis (ignores tile, iterate, launch_bounds, m, parts); march = one work item "
          "per column along the slowest axis (ignores iterate and the slowest axis' tile entry)")
          .choices({"auto", "mdrange", "register-blocked", "subdomain", "line", "march"}),
      Key("kernel", "layout", T::string, R"("right")",
          "Kokkos View layout of the fields: left = x contiguous, right = z contiguous")
          .choices({"left", "right"}),
      Key("kernel", "iterate", T::string, R"("auto")",
          "MDRange iteration order; auto = the contiguous index fastest on the execution space")
          .choices({"auto", "left", "right"}),
      Key("kernel", "tile", T::integer3, "[0, 0, 0]",
          "MDRange tile per axis (x y z); 0 = Kokkos' default for that axis")
          .min(0),
      Key("kernel", "launch_bounds", T::integer, "0",
          "maximum threads per block promised to the compiler (Kokkos::LaunchBounds); 0 = none")
          .int_choices({0, 128, 256, 512, 1024}),
      Key("kernel", "m", T::integer, "8",
          "points per work item along y (register-blocked, subdomain); planes loaded per step "
          "(march)")
          .int_choices({1, 2, 4, 8, 16}),
      Key("kernel", "parts", T::integer_or_auto, R"("auto")",
          "subdomain: parts of the y range launched one after another, auto = sized so three "
          "planes fit in the last-level cache; march: slabs of the slowest axis, auto = enough "
          "work items to fill the device")
          .min(1),
      Key("kernel", "streaming_stores", T::boolean, "true",
          "register-blocked, subdomain, march: GPU stores of the result marked evict-first (CUDA "
          "st.global.cs, HIP non-temporal) so they leave the L2 to the input; plain stores on "
          "the host"),
      // [laplacian]
      Key("laplacian", "field", T::string, R"("sine")",
          "input field u, written to the output; verification always also checks the quadratic "
          "field")
          .choices({"sine", "quadratic"}),
      // [output]
      Key("output", "root", T::string, R"("outputs")", "folder that holds the run folders"),
      Key("output", "enabled", T::boolean, "true",
          "write a run folder: summary.json, the resolved deck and (with fields) HDF5 + XDMF"),
      Key("output", "fields", T::boolean, "true",
          "write the fields as HDF5 + XDMF (false: figures only, e.g. for benchmarks)"),
      Key("output", "overwrite", T::boolean, "false",
          "replace an existing run folder (also: kstencil run --overwrite)"),
  };
  return schema;
}

}  // namespace kstencil
