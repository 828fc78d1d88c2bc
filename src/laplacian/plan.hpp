#pragma once
// The Laplacian's launch plan: the kernel's parameters, the axis roles and the launch, computed
// once from the configuration, the grid and the device limits. Validation (problem), launching
// (apply_laplacian) and the report (describe) all read the same plan; a timed loop launches a
// prepared plan and never plans again.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/prefetch.hpp"
#include "core/exec_space.hpp"
#include "core/grid.hpp"
#include "core/mapping.hpp"

namespace kstencil {

// The three kernels (docs/ARCHITECTURE.md): plain Kokkos, register blocks, whole lines.
enum class LaplacianKernel {
  mdrange,  // one point per work item: the plain Kokkos baseline
  blocked,  // a block of m x m_slow points per work item, y optionally in parts (seed 000's 5 and
            // 7)
  line      // m rows of m_slow planes per work item, each row a whole line (the host kernel)
};

std::string to_string(LaplacianKernel kernel);
// The kernel a deck word names; nullopt for "auto" and for words that name no kernel.
std::optional<LaplacianKernel> parse_laplacian_kernel(const std::string& word);
// For a variant word kstencil no longer offers, what to use instead; nullopt otherwise.
std::optional<std::string> retired_laplacian_variant(const std::string& word);

// What a deck (or the backend's default) says of the kernel, in the deck's units: every key means
// one thing for every kernel (docs/DECK_KEYS.md).
struct LaplacianKernelParams {
  LaplacianKernel kernel = LaplacianKernel::mdrange;
  IterOrder iterate = IterOrder::automatic;   // mdrange and blocked (line has its own 2D policy)
  std::array<std::int64_t, 3> tile{0, 0, 0};  // work items per work group along x y z; 0 = Kokkos'
  int launch_bounds = 0;                      // max threads per block (GPU kernels); 0 = none
  int m = 1;                // points per work item along y (blocked: block rows; line: rows)
  int m_slow = 1;           // points per work item along the slowest axis (blocked, line)
  int m_contiguous = 1;     // blocked: points per work item along the contiguous axis (1, 2, 4)
  int blocks_per_item = 1;  // blocked: m x m_slow blocks one after another along the slowest axis
  int parts = 1;            // blocked: y parts run one after another, all in one launch
  bool streaming_stores = true;  // GPU: evict-first stores; line on AVX hosts: non-temporal lines
  bool zero_row_ends = true;     // blocked, line: store 0 either side of each row (whole lines)
  Prefetch prefetch;  // line on AVX hosts: its rows' prefetches from memory (bytes 0: none)
};

// Whether the kernel's rows prefetch (kernel.prefetch): line with streaming stores on an AVX host.
bool line_prefetches(const LaplacianKernelParams& params, bool gpu);

// Largest register block m x m_slow the blocked kernel compiles: larger blocks need 254-255
// registers or spill on sm_90 (docs/PERFORMANCE.md, "Registers and spills").
inline constexpr int max_block_points = 16;

// Blocked launches start the contiguous axis at a multiple of 32 work items so that a warp's loads
// and stores cover whole cache lines (seed 000's kernel 5 gives the boundary point an idle thread).
inline constexpr Index column_alignment = 32;
// Blocked's policy range along the contiguous axis for updated points [c_begin, c_end), in work
// items of m_contiguous points: from a multiple of column_alignment items below them (below
// c_begin - 1 with row ends) to the item holding c_end - 1 (c_end with row ends, whose work items
// store 0 at c_begin - 1 and c_end).
std::array<Index, 2> blocked_contiguous_range(Index c_begin, Index c_end, bool zero_row_ends,
                                              int m_contiguous = 1);

// Which index plays which role: the slowest axis (x in LayoutRight, z in LayoutLeft), y, and the
// contiguous axis (z in LayoutRight, x in LayoutLeft).
struct AxisRoles {
  int slow = 0, contiguous = 2;
  static constexpr int y = 1;
  static AxisRoles of(Layout layout) {
    return layout == Layout::right ? AxisRoles{0, 2} : AxisRoles{2, 0};
  }
};

// The one launch a plan makes, as Kokkos runs it. Bounds and tile in policy order; the tile has
// Kokkos' default entries filled in. Ranges are the points updated, in local indices by role.
struct LaplacianLaunch {
  int rank = 3;  // policy rank: 2 for line (plane blocks, row blocks), else 3
  Index3 lower{0, 0, 0}, upper{0, 0, 0};
  std::array<std::int64_t, 3> tile{1, 1, 1};
  Index s_begin = 0, s_end = 0, j_begin = 0, j_end = 0, c_begin = 0, c_end = 0;
  // blocked: work items along the slowest axis and blocks along y per y part (the slowest-axis
  // policy index runs part after part).
  Index slow_items_per_part = 0, y_blocks_per_part = 0;
};

struct LaplacianPlan {
  LaplacianKernelParams params;
  Layout layout = Layout::right;
  int element_bytes = 8;
  AxisRoles axes;
  Mapping mapping;         // mdrange and blocked: array index -> policy dimension, Iterate
  Box box;                 // points updated, local indices
  Real3 spacing{1, 1, 1};  // of the grid: the stencil's coefficients
  std::optional<LaplacianLaunch> launch;  // none where the box is empty
  std::optional<std::string> problem;     // why the plan cannot run on the limits it was made for
  std::string problem_key;                // the [kernel] key the problem concerns
  std::string problem_allowed;            // what that key allows for this kernel

  // The axis along which points either side of each row get 0 (the contiguous axis), -1 if the
  // kernel leaves every point outside the box alone.
  int zeroed_row_end_axis() const;
  // Points a work group covers along x y z (tile times what a work item covers).
  std::array<std::int64_t, 3> points_per_group() const;
  // "policy (k,j,i), Iterate::Left" or the line kernel's own order.
  std::string policy_description() const;
  // The kernel's parameters in words: "8 x 1 points per work item, 3 blocks per work item, ...".
  std::string details(bool gpu) const;
};

// The plan for `params` over the grid's update box on `limits` (problem set, not thrown, when it
// cannot run there).
LaplacianPlan plan_laplacian(const LaplacianKernelParams& params, Layout layout, int element_bytes,
                             const Grid& grid, const ExecLimits& limits);
// The same over part of the update box (`box`, local indices), e.g. the interior or a shell slab
// of an overlapped step (which must not zero row ends: they may be other parts' points).
LaplacianPlan plan_laplacian(const LaplacianKernelParams& params, Layout layout, int element_bytes,
                             const Grid& grid, const Box& box, const ExecLimits& limits);

// What a deck asks for: nullopt (the deck's "auto") and 0 tile entries take the default of the
// kernel on this backend.
struct LaplacianKernelRequest {
  std::optional<LaplacianKernel> kernel;  // auto: blocked on GPUs, line on hosts
  IterOrder iterate = IterOrder::automatic;
  std::array<std::int64_t, 3> tile{0, 0, 0};
  std::optional<int> launch_bounds, m, m_slow, m_contiguous, blocks_per_item, parts;
  bool streaming_stores = true;
  bool zero_row_ends = true;
  std::optional<int> prefetch;  // auto: the kernel's default where it prefetches, else 0
  std::optional<PrefetchInto> prefetch_into;  // auto: l1
  // GPU work groups of whole warps along the rows (Jacobi's warps add their lanes' sums), where
  // rows of 16 lanes or fewer otherwise share a warp.
  bool whole_warps_along_rows = false;
};

// Whether blocked compiles runs of m_contiguous > 1 points along the contiguous axis for these
// parameters: pairs in either precision for an m x m_slow block of 4 or 8 points, quads of floats
// (16 bytes) for 4 x 2; streaming stores. Validation, the defaults and the kernels' template
// dispatch (LaplacianPoint::compiled) all read this one statement.
constexpr bool blocked_runs_compiled(const int m_contiguous, const int m, const int m_slow,
                                     const bool streaming_stores, const int element_bytes) {
  if (m_contiguous == 4) return element_bytes == 4 && streaming_stores && m == 4 && m_slow == 2;
  return m_contiguous == 2 && streaming_stores && (m * m_slow == 4 || m * m_slow == 8);
}
// Whether runs of m_contiguous points fit a grid whose allocated contiguous extent is
// `contiguous_extent`: they are aligned only where it is a multiple of m_contiguous.
bool blocked_runs_fit(int m_contiguous, std::int64_t contiguous_extent);

// The parameters `request` resolves to on `limits`: the backend's defaults (measured,
// docs/PERFORMANCE.md) wherever the request leaves the choice open.
LaplacianKernelParams resolve_laplacian_params(const LaplacianKernelRequest& request,
                                               const ExecLimits& limits, Layout layout,
                                               const Grid& grid, int element_bytes);

// Number of y parts for blocked so that `planes` planes (cross-sections normal to the slowest axis)
// of one part fit in a quarter of the last-level cache, in whole blocks of m points along y.
int auto_blocked_parts(const Grid& grid, Layout layout, int element_bytes, std::int64_t llc_bytes,
                       int m, int planes);

// Points the Laplacian updates on this rank: interior of the domain within the owned box.
inline Box laplacian_update_box(const Grid& grid) {
  return grid.owned.intersect(grid.interior());
}

}  // namespace kstencil
