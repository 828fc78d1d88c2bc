#include "fdtd/fdtd_deck.hpp"

#include "core/deck_keys.hpp"

namespace kstencil {

namespace {
// Beyond these the update coefficients and the energy's terms overflow or underflow in float.
constexpr const char* kMaterialRange =
    "relative material constants outside it overflow or underflow the update coefficients and "
    "the energy in float";
constexpr const char* kConductivityRange =
    "larger conductivities overflow the loss term of the update coefficients";
}  // namespace

const Schema& fdtd_schema() {
  using T = KeyType;
  static const Schema schema = join_keys({
      run_keys("fdtd"),
      {Key("grid", "nx", T::integer, "64", "cells along x (nodes: nx + 1)").min(2),
       Key("grid", "ny", T::integer, "64", "cells along y").min(2),
       Key("grid", "nz", T::integer, "64",
           "cells along z; (nx + 1) (ny + 1) (nz + 1) nodes at most 2^48")
           .min(2)
           .deck_check([](const Deck& deck) { check_grid_points(deck, 1); })},
      spacing_keys(),
      {Key("time", "steps", T::integer, "100", "time steps to run").min(0).max(1e9),
       Key("time", "courant", T::real, "0.5",
           "Courant number S = dt c_max sqrt(1/hx^2 + 1/hy^2 + 1/hz^2), c_max the fastest wave "
           "speed of the media; the 3D Yee scheme is stable only for S < 1")
           .min_exclusive(0)
           .max_exclusive(1)
           .because(
               "a time step of 0 advances nothing, and the 3D Yee scheme is unstable for Courant "
               "numbers >= 1")},
      {Key("kernel", "variant", T::string, R"("auto")",
           "update kernels; cell = one cell per work item (3D MDRange, layout-aware mapping); "
           "column = one work item per column along the slowest axis (2D MDRange, ignores "
           "iterate and the slowest axis' tile entry); line = one work item per row along the "
           "contiguous axis, vectorised on hosts (2D MDRange, ignores iterate and the contiguous "
           "axis' tile entry; on hosts 0 entries are fitted to the caches); pairs = two cells "
           "along the contiguous axis per work item (3D MDRange over the pairs, the contiguous "
           "axis' tile entry counts pairs; on GPUs 8-byte float, 16-byte double accesses); fused "
           "= line's rows and tiles with H and then E in one sweep, each field read from memory "
           "once a step instead of twice (hosts, one rank); auto = fused on hosts (line with "
           "several ranks), pairs on GPUs")
           .choices({"auto", "cell", "column", "line", "pairs", "fused"})},
      kernel_trait_keys(),
      {prefetch_key(), prefetch_into_key()},
      {Key("media", "mode", T::string, R"("uniform")",
           "uniform = scalar update coefficients; arrays = per-cell coefficient arrays (3 more "
           "values read per cell and step)")
           .choices({"uniform", "arrays"}),
       Key("media", "eps", T::real, "1.0", "relative permittivity of the background")
           .min(1e-6)
           .max(1e6)
           .because(kMaterialRange),
       Key("media", "mu", T::real, "1.0", "relative permeability of the background")
           .min(1e-6)
           .max(1e6)
           .because(kMaterialRange),
       Key("media", "sigma", T::real, "0.0", "electric conductivity of the background (lossy > 0)")
           .min(0)
           .max(1e15)
           .because(kConductivityRange),
       Key("media", "block_lo", T::real3, "[0.0, 0.0, 0.0]",
           "arrays mode: lower corner (x y z) of a block of other material; no block if "
           "block_hi <= block_lo along an axis"),
       Key("media", "block_hi", T::real3, "[0.0, 0.0, 0.0]",
           "arrays mode: upper corner (x y z) of the block"),
       Key("media", "block_eps", T::real, "1.0", "relative permittivity in the block")
           .min(1e-6)
           .max(1e6)
           .because(kMaterialRange),
       Key("media", "block_mu", T::real, "1.0", "relative permeability in the block")
           .min(1e-6)
           .max(1e6)
           .because(kMaterialRange),
       Key("media", "block_sigma", T::real, "0.0", "electric conductivity in the block")
           .min(0)
           .max(1e15)
           .because(kConductivityRange)},
      {Key("init", "field", T::string, R"("zero")",
           "initial fields: zero, or the PEC cavity eigenmode init.mode (E at t = 0, H at "
           "-dt/2 from the discrete scheme)")
           .choices({"zero", "cavity-mode"}),
       Key("init", "mode", T::integer3, "[1, 1, 0]",
           "cavity mode indices (m n p): half wavelengths along x y z; at least two non-zero")
           .min(0)},
      {Key("source", "kind", T::string, R"("none")",
           "none, or a soft point current source J(t) on one E component")
           .choices({"none", "point"}),
       Key("source", "component", T::string, R"("ez")", "E component the source drives")
           .choices({"ex", "ey", "ez"}),
       Key("source", "position", T::real3, "[0.0, 0.0, 0.0]",
           "source position (x y z), inside the domain; the nearest updated value is driven"),
       Key("source", "waveform", T::string, R"("gaussian-sine")",
           "gaussian-sine: A exp(-((t-t0)/w)^2) sin(2 pi f (t-t0)); ricker: A (1 - 2 a^2) "
           "exp(-a^2), a = pi f (t-t0)")
           .choices({"gaussian-sine", "ricker"}),
       Key("source", "amplitude", T::real, "1.0", "A")
           .min(-1e15)
           .max(1e15)
           .because("the problem is linear (scale the results instead); larger values overflow "
                    "float fields and the energy's squares"),
       Key("source", "frequency", T::real, "0.1", "f (normalised units: c0 = 1)").min_exclusive(0),
       Key("source", "delay", T::real, "20.0", "t0").min(0),
       Key("source", "width", T::real, "8.0", "w (gaussian-sine)").min_exclusive(0)},
      {Key("diagnostics", "every", T::integer, "10",
           "steps between energy and probe records (energy.csv, probes.csv), at steps 0, every, "
           "2 every, ... before the last (the energy at step n takes H at n + 1/2, from the step "
           "after it); 0 = none")
           .min(0),
       Key("diagnostics", "probes", T::real3_list, "[]",
           "probe positions [[x, y, z], ...]: every component at its nearest lattice point"),
       Key("diagnostics", "plot", T::boolean, "true",
           "also plot the energy to energy.png (needs python3 with matplotlib; skipped with a "
           "warning otherwise)")},
      mpi_keys(),
      output_keys(),
      {Key("output", "every", T::integer, "0",
           "steps between field outputs (E at n dt, H at (n - 1/2) dt); 0 = the last step only")
           .min(0)},
      checkpoint_keys("steps"),
  });
  return schema;
}

}  // namespace kstencil
