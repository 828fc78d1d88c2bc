#pragma once
// Jacobi iteration for the Poisson problem (poisson.hpp; seed 004) on 1D, 2D or 3D grids. Interior
// points are updated from the old iterate:
//   u_new = (sum_d (u(-e_d) + u(+e_d)) / h_d^2 - rhs) / (sum_d 2 / h_d^2)      (lap u = rhs)
// which in 1D with h = 1 and rhs = 0 is the seed's u_new = 0.5 (u_left + u_right). The error of an
// iteration is the seed's sqrt(sum (u_new - u_old)^2 / N), N = every point of the grid.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/prefetch.hpp"
#include "core/exec_space.hpp"
#include "core/field.hpp"
#include "core/grid.hpp"
#include "core/halo.hpp"
#include "core/mapping.hpp"
#include "core/side_instance.hpp"
#include "core/stores.hpp"
#include "core/stream_mark.hpp"
#include "laplacian/plan.hpp"
#include "poisson/poisson.hpp"

namespace kstencil {

enum class NormStrategy {
  reduce,          // the norm in the update kernel: MDRange parallel_reduce (tile, launch bounds)
  reduce_range,    // the same over a flat RangePolicy (Kokkos 3.4's MDRange reduce is slow on GPUs)
  atomic,          // every point atomically adds its square into one global value (seed's baseline)
  kokkos_kernels,  // the update kernel, then KokkosBlas::update (the difference) and
                   // KokkosBlas::nrm2
  team,     // seed 004's hierarchical sum without a global reduction: each team of a TeamPolicy
            // updates a piece of a row and writes its partial sum; the last team adds them
            // (src/jacobi/team.hpp)
  blocked,  // the Laplacian's blocked kernel (3D grids): each work item writes the sum over its
            // register blocks; a second kernel adds the work items' sums (src/jacobi/blocked.hpp)
  line      // 3D grids, hosts: a work item a block of rows along the contiguous axis in 1 or 4
            // planes, vectorised, changes in T squared (AVX2/AVX-512: in T, a vector's planes
            // summed in T, then in double; else in double); Kokkos' reduction adds the work
            // items (src/jacobi/line.hpp)
};
NormStrategy parse_norm_strategy(const std::string& word);
// jacobi.norm = "auto": the strategy measured fastest on the backend for the grid's dimension
// (docs/PERFORMANCE.md, Jacobi).
NormStrategy default_norm_strategy(const ExecLimits& limits, const Grid& grid);
std::string to_string(NormStrategy strategy);

// What a deck (or the backend's default) asks of the update kernel, in the deck's units.
struct JacobiKernelConfig {
  Layout layout = Layout::right;  // of the fields
  IterOrder iterate = IterOrder::automatic;
  std::array<std::int64_t, 3> tile{0, 0, 0};  // per axis x, y, z; 0 = Kokkos' default entry
  int launch_bounds = 0;
  int blocks_per_item = 0;  // the blocked norm's; 0 = the Laplacian's blocked default
  NormStrategy norm = NormStrategy::reduce;
  int element_bytes = 8;  // of the fields: the blocked kernel's defaults depend on it
};

struct JacobiStop {
  double tolerance = 1e-4;
  std::int64_t max_iterations = 1000;
  int norm_every = 1;  // compute the error every k iterations (k = 1: every one)
};

// The backend's default kernel for a norm strategy: on GPUs 128 work items along the contiguous
// axis of the grid with launch bounds 128 (256 and 256 for the MDRange reduction, see the
// definition); on the host Kokkos' tiles, except long x tiles for 1D grids (Kokkos' default host
// tile cuts a 1D range into pieces of two points).
JacobiKernelConfig default_jacobi_kernel(const ExecLimits& limits, const Grid& grid, Layout layout,
                                         IterOrder iterate, NormStrategy norm);

// The update kernel's plan, computed once from the configuration, the grid and the device limits:
// validation (problem), launching (JacobiSolver) and the report (describe) read it.
struct JacobiPlan {
  JacobiKernelConfig config;
  Mapping mapping;
  Index3 points{0, 0, 0};  // of the grid it was made for
  // The MDRange launch over the interior: bounds and tile in policy order, the tile with Kokkos'
  // default entries filled in.
  Index3 lower{0, 0, 0}, upper{0, 0, 0};
  std::array<std::int64_t, 3> tile{1, 1, 1};
  // reduce-range and line: the interior per axis x y z (local indices), walked as one flat range
  // (line: as rows along the contiguous axis).
  std::array<int, 3> box_lo{0, 0, 0}, box_extent{0, 0, 0};
  std::int64_t box_size = 0;
  // line (hosts only): work items of `line_rows` rows (y) of `line_planes` planes (1, 2 or 4)
  // together, swept in the Laplacian's line tiles (`line_tile` work items along the slowest axis
  // and along y, host_line_tile) or, with line_blocks_outer, one block of rows after another over
  // all threads; the distance in bytes at which the rows prefetch their streams from memory.
  int line_planes = 1, line_rows = 0;
  std::array<std::int64_t, 2> line_tile{1, 1};
  bool line_blocks_outer = false;
  Prefetch line_prefetch;
  RowEnds line_ends = RowEnds::none;
  // team: `league` teams of `team_size` threads (0: Kokkos::AUTO), each over up to `team_chunk`
  // points along team_axes[0] (the contiguous axis; team_chunks per row) by `team_march` planes
  // along team_axes[2] (the slowest), rows along team_axes[1] fastest in the league.
  std::array<int, 3> team_axes{0, 1, 2};
  int team_size = 0, team_chunk = 1, team_chunks = 1, team_march = 1;
  std::int64_t league = 0;
  // team: the points a thread reads and writes an access along the row: 16 bytes' worth (4 floats,
  // 2 doubles) where the box is the owned interior (the rest of a row is its two ends, which no
  // part updates) and the rows' allocated length `team_row` holds whole 16-byte packets; else 1.
  // With packets the pieces cover the allocated rows from their aligned starts.
  int team_width = 1, team_row = 0;
  // team with packets: the rows beside a row that the update reads (those along an axis that is
  // not collapsed, and along x), bit 0 along team_axes[1], bit 1 along team_axes[2].
  int team_rows = 3;
  // blocked: the Laplacian's blocked plan over the same box (its kernel, tile and launch bounds;
  // the backend's blocked defaults where the configuration leaves them at 0).
  std::optional<LaplacianPlan> blocked;
  // blocked with the norm: work items whose sums one slot holds. On CUDA a warp adds its 32 lanes'
  // sums (core/warp_sum.hpp) where its lanes are consecutive items of one row; the launch's
  // contiguous range then runs to whole warps (the items past the row end update nothing).
  int sum_lanes = 1;
  // The most squared changes one partial sum adds in the fields' precision before the rest of the
  // norm is summed in double: a blocked work item's points, a team thread's packets over its
  // planes, kokkos-kernels' every point, line's planes a work item on AVX2 and AVX-512 rows (a
  // vector's planes squared and summed in T) and 1 elsewhere (its changes in T, their squares in
  // double); 0 where each change is taken in double.
  std::int64_t sum_points = 0;
  bool gpu = false;                    // made for a GPU's limits
  std::optional<std::string> problem;  // why the plan cannot run on the limits it was made for

  // "policy (i,j,k), Iterate::Left"; blocked adds its blocks ("...; 8 x 1 points per block ...").
  std::string describe() const;
};

// The most an error computed by `plan` may differ from the same squared changes summed in double,
// relative, on a grid of `points` (recursive summation's worst case): (k + 2) eps of the fields'
// precision for partial sums of k = plan.sum_points squares (the difference, its square, k - 1
// additions), and (points + 2) eps of double for the rest. Verification and the tests check it.
double jacobi_error_tolerance(const JacobiPlan& plan, double points);

// The plan over the grid's owned interior, or over `box` (local indices; a part of an overlapped
// iteration).
JacobiPlan plan_jacobi(const JacobiKernelConfig& config, const Grid& grid,
                       const ExecLimits& limits);
JacobiPlan plan_jacobi(const JacobiKernelConfig& config, const Grid& grid, const Box& box,
                       const ExecLimits& limits);

// Fields and iteration on the default execution space.
template <class T, class KokkosLayout>
class JacobiSolver {
 public:
  // `plan`: made for the problem's grid and this layout, without a problem (else throws
  // std::invalid_argument). Several ranks: `d` cut the problem's grid (the solver keeps a
  // reference); `overlap_plans` (interior, then the shell) update while the halo is in flight.
  JacobiSolver(const PoissonProblem& problem, const JacobiPlan& plan,
               const Decomposition& d = Decomposition::single(),
               std::vector<JacobiPlan> overlap_plans = {});
  // One iteration old -> new (then the two swap); with `norm`, returns the error.
  std::optional<double> iterate(bool norm);
  // Iterates until the error is at most the tolerance or max_iterations are done, calling
  // on_error(iteration, error) for each computed error (the seed's loop, with norm_every).
  // `from`: where it starts (a checkpoint's solve so far) and the checkpoints on the way.
  // Pipelined, each iteration is launched before the error of the one before it is read, so that
  // the device never waits for the host; an iteration launched past the stop is undone (it wrote
  // the other iterate only), so the result is the same either way.
  SolveResult solve(const JacobiStop& stop,
                    const std::function<void(std::int64_t, double)>& on_error = {},
                    const SolveContinuation& from = {});
  // Default: where the host can run ahead of the device (StreamMark::asynchronous()).
  void set_pipelined(bool on) { pipelined_ = on; }
  // The current iterate over this rank's owned box, x fastest (host memory).
  std::vector<T> solution_host() const;
  // Continues from a checkpoint's iterate (this rank's owned box, x fastest).
  void restore(const std::vector<T>& owned);
  const Grid& grid() const { return grid_; }
  const JacobiPlan& plan() const { return plan_; }
  const HaloExchange<T, KokkosLayout>& halo() const { return halo_; }
  void reset_halo_times() { halo_.times = HaloTimes{}; }

 private:
  Grid grid_;
  JacobiPlan plan_;
  std::vector<JacobiPlan> overlap_plans_;
  MPI_Comm comm_;
  HaloExchange<T, KokkosLayout> halo_;
  // The update of the plan's box; with the norm, the local sum of squared changes goes to
  // partial_sums_(slot) without waiting for it, so that an interior update overlaps the halo
  // (blocked: added on sums_side_ from item_sums_[next_buffer_]).
  void update_part(const JacobiPlan& plan, bool norm, int slot);
  // An iteration launched with the norm whose error is not read yet: its partial sums are on
  // their way to sums_host_[buffer] (the first `slots`), or `sum` is known already.
  struct Launched {
    std::int64_t iteration;
    int buffer, slots;
    std::optional<double> sum;
  };
  // One iteration old -> new (then the two swap), without waiting for it.
  std::optional<Launched> launch(std::int64_t iteration, bool norm);
  double error_of(const Launched& launched);  // waits for its sums
  Field<T, KokkosLayout> old_, new_, rhs_;
  Kokkos::View<double*> partial_sums_;  // one per part of an overlapped update (else one)
  Kokkos::View<double*> team_sums_;     // team: one per team of the largest plan
  Kokkos::View<int*> teams_finished_;   // team: per part, the teams of its launch finished
  // blocked: per buffer, item_sums_per_part_ slots for each part (as many as its largest plan's).
  Kokkos::View<double*> item_sums_[2];
  std::int64_t item_sums_per_part_ = 0;
  // Two, so that an iteration's sums can travel while the host reads the one's before.
  Kokkos::View<double*, StagingSpace> sums_host_[2];
  StreamMark sums_ready_[2];
  // blocked: the second stage (the slots' sum and its copy to the host) runs on an instance of
  // its own, beside the next iteration's update, after its own update (updated_); the item sums
  // alternate between two buffers, and an update waits until the second stage that read its
  // buffer two iterations before is done (sums_ready_). Destroyed first: it waits for its work.
  StreamMark updated_;
  std::unique_ptr<SideInstance> sums_side_;
  int next_buffer_ = 0;
  bool pipelined_ = StreamMark::asynchronous();
  Field<T, KokkosLayout> difference_;  // the kokkos-kernels strategy's u_new - u_old
  bool has_rhs_ = false;
  std::optional<T> uniform_rhs_;  // f as a scalar (rhs_ then a one-point field)
  T cx_, cy_, cz_, inverse_diagonal_;
};

// Host reference for one iteration (plain loops, same formula and order): new from old, x-fastest
// vectors over the whole grid. Returns the sum of squared differences.
template <class T>
double jacobi_reference_iteration(const Grid& grid, const std::vector<T>& old_values,
                                  const std::vector<T>& rhs, std::vector<T>& new_values);
// The same over part of the grid: the vectors cover `values` (global indices, x fastest), the
// points of `update` are updated and the squared differences summed over `sum` (rhs empty: 0).
template <class T>
double jacobi_reference_iteration(const Grid& grid, const Box& values, const Box& update,
                                  const Box& sum, const std::vector<T>& old_values,
                                  const std::vector<T>& rhs, std::vector<T>& new_values);

}  // namespace kstencil
