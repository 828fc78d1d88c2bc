#pragma once
// 3D Yee FDTD Maxwell solver (seed 001) on Kokkos MDRange kernels.
//
// Normalised units: c0 = 1, eps0 = mu0 = 1; relative permittivity eps, permeability mu and
// conductivity sigma per cell. The domain is nx x ny x nz cells of size hx x hy x hz with perfect
// electric conductor walls. Components sit at (with x = origin + i hx, ...):
//   Ex (i+1/2, j, k)   Ey (i, j+1/2, k)   Ez (i, j, k+1/2)      at times n dt
//   Hx (i, j+1/2, k+1/2)   Hy (i+1/2, j, k+1/2)   Hz (i+1/2, j+1/2, k)   at times (n+1/2) dt
// Every component is stored in an array of (nx+1) x (ny+1) x (nz+1) nodes; entries outside a
// component's lattice and tangential E on the walls stay zero.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/prefetch.hpp"
#include "core/exec_space.hpp"
#include "core/field.hpp"
#include "core/grid.hpp"
#include "core/halo.hpp"
#include "core/mapping.hpp"

namespace kstencil {

enum class FdtdVariant {
  cell,    // one cell per work item, 3D MDRange with the layout-aware mapping
  column,  // one work item per column along the slowest axis, 2D MDRange (seed 001's loop over z)
  line,    // one work item per row along the contiguous axis, vectorised on hosts, 2D MDRange
  pairs,   // two cells along the contiguous axis per work item (on GPUs through 8-byte float or
           // 16-byte double accesses), 3D MDRange over the pairs with the layout-aware mapping
  fused    // line's rows and tiles, H and then E in one sweep over each tile (hosts, one rank)
};
FdtdVariant parse_fdtd_variant(const std::string& word);
std::string to_string(FdtdVariant variant);

// What a deck (or the backend's default) asks of the update kernels, in the deck's units.
struct FdtdKernelConfig {
  FdtdVariant variant = FdtdVariant::cell;
  Layout layout = Layout::right;             // of the fields
  IterOrder iterate = IterOrder::automatic;  // cell variant
  // Per axis x, y, z; 0 = Kokkos' default entry (the line variant on hosts: planes and rows per
  // tile fitted to the caches).
  std::array<std::int64_t, 3> tile{0, 0, 0};
  int launch_bounds = 0;
  int element_bytes = 8;  // of the fields: the line variant's host tile
  Prefetch prefetch;      // line on AVX hosts: its rows' prefetches from memory (bytes 0: none)
};

// Whether the variant updates in rows along the contiguous axis (line and fused).
constexpr bool fdtd_rows(const FdtdVariant variant) {
  return variant == FdtdVariant::line || variant == FdtdVariant::fused;
}

// Whether the kernel's rows prefetch (kernel.prefetch): line and fused on an AVX host.
bool fdtd_line_prefetches(const FdtdKernelConfig& config, bool gpu);

enum class MediaMode {
  uniform,  // scalar update coefficients
  arrays    // per-cell coefficient arrays (ca, cb for E, db for H): 3 more values read per cell
};
MediaMode parse_media_mode(const std::string& word);
std::string to_string(MediaMode mode);

struct Material {
  double eps = 1, mu = 1, sigma = 0;
};

struct Media {
  MediaMode mode = MediaMode::uniform;
  Material background;
  // arrays mode: cells whose node (x_i, y_j, z_k) lies in [block_lo, block_hi] get `block`.
  bool has_block = false;
  Real3 block_lo{0, 0, 0}, block_hi{0, 0, 0};
  Material block;
};

enum class Waveform { gaussian_sine, ricker };
Waveform parse_waveform(const std::string& word);

// A soft current source J(t) driving one E component at one point: eps dE/dt = curl H - J.
struct PointSource {
  int component = 2;      // 0 = Ex, 1 = Ey, 2 = Ez
  Index3 index{0, 0, 0};  // array index of the driven component
  Waveform waveform = Waveform::gaussian_sine;
  double amplitude = 1, frequency = 1, delay = 0, width = 1;
  double value(double t) const;  // J at time t
};

// Initial condition: the PEC cavity eigenmode (m, n, p) with amplitude 1 in E.
struct CavityMode {
  CavityMode() = default;
  CavityMode(const std::array<int, 3>& m, const std::optional<Real3>& q = std::nullopt)
      : mode(m), polarization(q) {}
  std::array<int, 3> mode{1, 1, 0};
  // With m, n and p all non-zero: E's direction is this vector's part orthogonal to kappa
  // (normalized); unset, (kappa_y, -kappa_x, 0) normalized, which leaves Ez zero.
  std::optional<Real3> polarization;
};

struct FdtdProblem {
  Index3 cells{16, 16, 16};
  Real3 spacing{1, 1, 1};
  Real3 origin{0, 0, 0};
  double courant = 0.5;  // dt * c_max * sqrt(1/hx^2 + 1/hy^2 + 1/hz^2); stable below 1
  Media media;
  std::optional<PointSource> source;
  std::optional<CavityMode> cavity;

  Grid nodes() const;             // (nx+1) x (ny+1) x (nz+1) points
  double max_wave_speed() const;  // 1 / sqrt(min eps mu) over the materials present
  double dt() const;
  double cell_volume() const { return spacing[0] * spacing[1] * spacing[2]; }
};

// The array index a point source at physical `position` drives for E component `component`:
// the nearest point of that component's lattice (clamped to the interior where it is updated).
// nullopt if `position` is outside the domain.
std::optional<Index3> source_index(const FdtdProblem& problem, int component,
                                   const Real3& position);

// Position of component c (0-2 = Ex..Ez, 3-5 = Hx..Hz) at array index (i, j, k).
Real3 component_position(const FdtdProblem& problem, int c, const Index3& index);
// Lattice dimensions (values per axis) and origin of component c, for output.
Index3 component_dims(const FdtdProblem& problem, int c);

// Cavity mode helpers. Discrete wave numbers kappa_d = 2/h_d sin(k_d h_d / 2), k_d = m_d pi/L_d;
// the E amplitude vector is orthogonal to kappa (discretely divergence-free), so the sampled
// mode is an exact eigenvector of the Yee curl-curl operator.
struct CavityModeShape {
  std::array<int, 3> mode{0, 0, 0};
  Real3 k{0, 0, 0}, kappa{0, 0, 0}, amplitude{0, 0, 0};
  double omega_discrete = 0;    // sin(omega dt / 2) = dt |kappa| / (2 sqrt(eps mu))
  double omega_continuous = 0;  // |k| / sqrt(eps mu)
};
CavityModeShape cavity_mode_shape(const FdtdProblem& problem, const CavityMode& mode);
// Ex, Ey or Ez (c = 0, 1, 2) of the mode's spatial shape at array index (i, j, k); 0 where the
// component is not on its lattice or lies on a wall.
double cavity_mode_e(const FdtdProblem& problem, const CavityModeShape& shape, int c,
                     const Index3& index, bool continuous_amplitude = false);
// cavity_mode_e of one component as a product of one factor per axis, tabulated over the global
// indices 0..cells[d] (0 off the lattice or on a wall): at() is cavity_mode_e bitwise, with three
// trigonometric evaluations per axis point instead of three per grid point.
struct CavityModeFactors {
  double amplitude = 0;
  std::array<std::vector<double>, 3> factor;
  double at(const Index3& index) const {
    double value = amplitude;
    bool zero = false;  // a factor 0: +0, as cavity_mode_e returns (a 0 amplitude keeps its sign)
    for (int d = 0; d < 3; ++d) {
      const double f = factor[d][static_cast<std::size_t>(index[d])];
      zero = zero || f == 0;
      value *= f;
    }
    return zero ? 0.0 : value;
  }
};
CavityModeFactors cavity_mode_factors(const FdtdProblem& problem, const CavityModeShape& shape,
                                      int c);

// Energy at time n dt: 1/2 sum eps |E^n|^2 dV + 1/2 sum mu H^(n-1/2) . H^(n+1/2) dV, the quantity
// the lossless Yee scheme conserves exactly (up to rounding).
struct EnergyRecord {
  std::int64_t step = 0;
  double time = 0, electric = 0, magnetic = 0;
  double total() const { return electric + magnetic; }
};

struct ProbeRecord {
  std::int64_t step = 0;
  double time = 0;
  std::vector<std::array<double, 6>> values;  // per probe: Ex Ey Ez at n dt, Hx Hy Hz at (n-1/2) dt
};

// The launch of one update (E or H; both run the same) over the cells, as Kokkos runs it: bounds
// and tile in policy order, the tile with Kokkos' default entries filled in.
struct FdtdLaunch {
  Index3 lower{0, 0, 0}, upper{0, 0, 0};
  std::array<std::int64_t, 3> tile{1, 1, 1};
  // column and line variants: the cells each work item loops over along the slowest (column) or
  // the contiguous axis (line): the first (local index) and how many; pairs: the cells along the
  // contiguous axis (the policy's bounds there count pairs of cells from local index 0).
  int loop_start = 0;
  int loop_length = 0;
};

// The update kernels' plan, computed once from the configuration, the cells and the device
// limits: validation (problem), launching (YeeSolver) and the report (describe) read it.
struct FdtdPlan {
  FdtdKernelConfig config;
  Mapping mapping;  // of the policy: cell as resolved, column Iterate::Left over (c, j)
  Index3 cells{0, 0, 0};
  FdtdLaunch launch;
  // The fields' rows along the contiguous axis are allocated in whole multiples of this many
  // values, the points beyond the grid never read: on GPUs rows of whole 128-byte lines, so that a
  // warp's row of values spans no more lines and sectors than it needs, and pairs of values stay
  // aligned from row to row (hosts: as long as the grid's, or whole pairs for the pairs variant).
  int row_alignment = 1;
  std::optional<std::string> problem;  // why the plan cannot run on the limits it was made for

  // The fields' allocated extents for a grid of `extents` points per axis.
  Index3 allocated_extents(const Index3& extents) const;

  // "policy (i,j,k), Iterate::Right", or the column variant's "policy (k,j), columns along x".
  std::string describe() const;
  // The launched tile in work items per axis x y z (a column or a row is one work item).
  std::array<std::int64_t, 3> tile_per_axis() const;
};

// The plan over every cell (one rank), or over `cells` (local indices of `nodes`, this rank's part
// of problem.nodes()): its owned cells, or a part of an overlapped update.
FdtdPlan plan_fdtd(const FdtdKernelConfig& config, const FdtdProblem& problem,
                   const ExecLimits& limits);
FdtdPlan plan_fdtd(const FdtdKernelConfig& config, const FdtdProblem& problem, const Box& cells,
                   const ExecLimits& limits);
// The cells a rank updates (local indices of `nodes`): its owned nodes that are cells.
Box owned_cells(const FdtdProblem& problem, const Grid& nodes);

// Where a solver made on another's fields (its `storage`) starts: at its problem's initial state
// (E and H zeroed, then its cavity mode if it has one), or from the state E and H hold, as a
// continuation of that state under its own problem (media, source) from step 0.
enum class FdtdStart { initial_state, storage_state };

// The solver state on the default execution space.
template <class T, class KokkosLayout>
class YeeSolver {
 public:
  struct Fields {
    Field<T, KokkosLayout> e[3], h[3];
    Field<T, KokkosLayout> ca, cb, db;  // arrays mode (the energy's eps and mu: MediaLookup)
  };

  // `plan`: made for the problem's cells (this rank's owned cells) and this layout, without a
  // problem (else throws std::invalid_argument). Several ranks: `d` cuts the node grid;
  // `overlap_plans` (interior, then the shell) update while the halo is in flight. `storage`: the
  // fields of a solver no longer needed (release()); those of this solver's extents are reused
  // instead of allocated, since fresh memory can be slow to touch (a VM's host backs it page by
  // page: docs/PERFORMANCE.md, "Not reached yet"), and start as `start` says (storage_state:
  // throws std::invalid_argument unless E and H are of this solver's extents).
  YeeSolver(const FdtdProblem& problem, const FdtdPlan& plan,
            const Decomposition& d = Decomposition::single(),
            std::vector<FdtdPlan> overlap_plans = {}, Fields storage = {},
            FdtdStart start = FdtdStart::initial_state);
  // The fields, for another solver's storage; this solver is not to be used afterwards.
  Fields release() { return std::move(fields_); }
  // Back to step 0 at the problem's initial state, as a new solver starts; the coefficient arrays
  // (which no step writes) are kept.
  void reset();

  // One leapfrog step n -> n+1: H^(n-1/2) -> H^(n+1/2), E^n -> E^(n+1), then the source.
  // With `energy`, also returns the energy at time n dt, summed reproducibly (the same bits on any
  // number of ranks and threads; six more passes over the fields; the fields evolve bitwise the
  // same).
  std::optional<EnergyRecord> step(bool energy = false);
  void run(std::int64_t steps) {
    for (std::int64_t s = 0; s < steps; ++s) step(false);
  }
  // Continues from a checkpoint: the six components (E at step dt, H at (step - 1/2) dt) over
  // this rank's component_box, x fastest.
  void restore(std::int64_t step, const std::vector<std::vector<T>>& components);
  std::int64_t steps_done() const { return step_; }
  double time() const { return step_ * dt_; }
  double dt() const { return dt_; }

  // Values at the probes' array indices (per component, see probe_indices()): E at time n dt and
  // H at (n - 1/2) dt, n = steps_done(). Collective: every rank gets every value.
  ProbeRecord probe(const std::vector<std::array<Index3, 6>>& indices) const;
  // Component c (0-5) over this rank's part of its lattice (component_box), x fastest (host
  // memory), for output and checks.
  std::vector<T> component_host(int c) const;
  Box component_box(int c) const;  // global indices
  const FdtdProblem& problem() const { return problem_; }
  const FdtdPlan& plan() const { return plan_; }
  const Grid& nodes() const { return grid_; }  // this rank's part of problem().nodes()
  MPI_Comm comm() const { return comm_; }
  HaloTimes halo_times() const;  // both half-steps' exchanges and updates, per step
  std::string halo_path() const { return halo_h_.path(); }
  void reset_halo_times();

  const Fields& fields() const { return fields_; }

 private:
  FdtdProblem problem_;
  FdtdPlan plan_;
  std::vector<FdtdPlan> overlap_plans_;
  Grid grid_;
  MPI_Comm comm_;
  // H reads E from above, E reads H from below: each half-step fills one side's ghosts.
  HaloExchange<T, KokkosLayout> halo_e_, halo_h_;
  double dt_;
  std::int64_t step_ = 0;
  Fields fields_;
  void initialize();
};

// The array indices of each component nearest to `position`, for probes.
std::array<Index3, 6> probe_indices(const FdtdProblem& problem, const Real3& position);

// Values each step must move per cell with separate E and H updates, as the figure of merit counts
// them: the E update reads E and H and writes E (9), the H update the same for H (9): 18; arrays
// mode also reads ca and cb in the E update and db in the H update: 21.
int fdtd_values_per_cell(MediaMode mode);
// The arrays a step sweeps: the six components, and ca, cb and db in arrays mode.
int fdtd_arrays(MediaMode mode);

// Verification of a configuration before it is timed: (1) the cavity mode (1,1,0) on the run's
// grid, spacing and background material evolves as the discrete analytic solution; (2) the run's
// own problem (media, source) agrees bitwise with an independent host implementation.
struct FdtdVerification {
  int mode_steps = 0;
  double mode_max_error = 0, mode_tolerance = 0;
  int reference_steps = 0;
  double reference_max_diff = 0;
  std::int64_t reference_mismatches = 0;
  std::int64_t reference_values = 0;  // compared, over the checked boxes
  bool passed = false;
};
// The cavity mode verification starts from: about a quarter of the cells per axis with every E
// component non-zero where every axis has two cells or more, else (1,1,0).
CavityMode cavity_check_mode(const FdtdProblem& problem);
// Several ranks: every rank calls it with its plans (collective); the reference runs on rank 0.
// The reference goes on from the cavity mode's state: during the cavity check's steps where the
// run's update is the same (no block, no loss, no source), else on the run's problem for steps of
// its own. `solver`, if given, receives the run's solver at its initial state, on the same fields.
template <class T, class KokkosLayout>
FdtdVerification verify_fdtd(const FdtdProblem& problem, const FdtdPlan& plan,
                             const Decomposition& d = Decomposition::single(),
                             const std::vector<FdtdPlan>& overlap_plans = {},
                             std::optional<YeeSolver<T, KokkosLayout>>* solver = nullptr);

}  // namespace kstencil
