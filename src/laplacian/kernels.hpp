#pragma once
// Kernel bodies of the Laplacian variants and the MDRange policies that launch them.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/policy.hpp"
#include "core/stores.hpp"
#include "laplacian/laplacian.hpp"

namespace kstencil {
namespace laplacian_detail {

// One launch: bounds in policy order. For column (register-blocked) launches the y dimension counts
// blocks of m points from j_begin and the slowest axis blocks of m_slow points from s_begin; the
// contiguous axis counts points from a multiple of column_alignment below c_begin.
struct LaunchPlan {
  Index3 lower{0, 0, 0};
  Index3 upper{0, 0, 0};
  Index j_begin = 0, j_end = 0;  // y range of points updated (local indices)
  Index s_begin = 0, s_end = 0;  // slowest axis' range of points updated (local indices)
  Index c_begin = 0, c_end = 0;  // contiguous axis' range of points updated (local indices)
  bool column = false;
};

// Column launches start the contiguous axis at a multiple of 32 elements (256 B in double, 128 B in
// float) so that a warp's loads and stores cover whole cache lines and sectors, as seed 000's
// kernel 5 does by giving the boundary point its own idle thread; the work items before the first
// updated point return at once.
inline constexpr Index column_alignment = 32;

std::vector<LaunchPlan> plan_launches(const LaplacianKernelConfig& config, const Grid& grid);

// The kernels' views of the fields: u and f never alias, so loads may move past stores (without
// this a work item's next loads wait for its previous store), and u goes through the read-only
// cache on GPUs.
template <class T, class KokkosLayout>
using StencilInput = Kokkos::View<const T***, KokkosLayout,
                                  Kokkos::MemoryTraits<Kokkos::Restrict | Kokkos::RandomAccess>>;
template <class T, class KokkosLayout>
using StencilOutput = Kokkos::View<T***, KokkosLayout, Kokkos::MemoryTraits<Kokkos::Restrict>>;

// Kernels that walk the slowest axis, y and the contiguous axis (x, y, z in LayoutRight; z, y, x in
// LayoutLeft) index fields and evaluate the stencil by those roles through the two helpers below.
template <class KokkosLayout>
KOKKOS_FORCEINLINE_FUNCTION constexpr bool x_is_slowest() {
  return std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
}

// v at slowest-axis index s, y index j, contiguous index c.
template <class View>
KOKKOS_FORCEINLINE_FUNCTION decltype(auto) at_slow_y_contiguous(const View& v, const int s,
                                                                const int j, const int c) {
  return x_is_slowest<typename View::array_layout>() ? v(s, j, c) : v(c, j, s);
}

// stencil7 with the neighbours given by axis role, passed on in stencil7's x, y, z order.
template <class KokkosLayout, class T>
KOKKOS_FORCEINLINE_FUNCTION T stencil7_by_role(const T centre, const T s_minus, const T s_plus,
                                               const T y_minus, const T y_plus, const T c_minus,
                                               const T c_plus, const StencilCoeffs<T>& a) {
  return x_is_slowest<KokkosLayout>()
             ? stencil7(centre, s_minus, s_plus, y_minus, y_plus, c_minus, c_plus, a)
             : stencil7(centre, c_minus, c_plus, y_minus, y_plus, s_minus, s_plus, a);
}

// One point per work item.
template <class T, class KokkosLayout, bool Reversed>
struct PointStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;

  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int j, const int p2) const {
    const int i = Reversed ? p2 : p0;
    const int k = Reversed ? p0 : p2;
    f(i, j, k) = stencil7(u(i, j, k), u(i - 1, j, k), u(i + 1, j, k), u(i, j - 1, k),
                          u(i, j + 1, k), u(i, j, k - 1), u(i, j, k + 1), a);
  }
};

// A block of M points along y by MS along the slowest axis per work item (AMD kernel 5, blocked
// in two directions). The (M + 2) x (MS + 2) centres around the block, corners excepted, are
// loaded once and serve as neighbours of each other, so a point costs ((M + 2)(MS + 2) - 4) / (M
// MS) loads through the L2 plus its two neighbours along the contiguous axis, which the work items
// beside it in the warp have just brought into the L1 (MS = 1, M = 4: 3.5; MS = 4, M = 4: 2). All
// loads are issued before the stores (M and MS are compile-time constants so the loops unroll).
// The policy counts blocks along y and the slowest axis, points along the contiguous axis.
// Streaming: stores marked evict-first, as kernel 5's non-temporal stores.
template <class T, class KokkosLayout, bool Reversed, int M, int MS, bool Streaming>
struct ColumnStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int j_begin, j_end;  // update range along y
  int s_begin, s_end;  // update range along the slowest axis (x in LayoutRight, z in LayoutLeft)
  int c_begin, c_end;  // update range along the contiguous axis; the policy starts aligned below

  static constexpr bool x_slowest = x_is_slowest<KokkosLayout>();

  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int block, const int p2) const {
    const int x_index = Reversed ? p2 : p0;
    const int z_index = Reversed ? p0 : p2;
    const int c = x_slowest ? z_index : x_index;
    if (c < c_begin || c >= c_end) return;
    const int s0 = s_begin + (x_slowest ? x_index : z_index) * MS;
    const int j0 = j_begin + block * M;
    // Rows past the update range are loaded clamped (s_end and j_end are boundary or halo planes,
    // always allocated) and their results dropped.
    T centre[MS + 2][M + 2];
    for (int p = 0; p < MS + 2; ++p) {
      const int s = s0 - 1 + p <= s_end ? s0 - 1 + p : s_end;
      for (int n = 0; n < M + 2; ++n) {
        const bool corner = (p == 0 || p == MS + 1) && (n == 0 || n == M + 1);
        const int j = j0 - 1 + n <= j_end ? j0 - 1 + n : j_end;
        centre[p][n] = corner ? T(0) : at_slow_y_contiguous(u, s, j, c);
      }
    }
    T result[MS][M];
    for (int p = 0; p < MS; ++p) {
      const int s = s0 + p < s_end ? s0 + p : s_end - 1;
      for (int n = 0; n < M; ++n) {
        const int j = j0 + n < j_end ? j0 + n : j_end - 1;
        const T c_minus = at_slow_y_contiguous(u, s, j, c - 1);
        const T c_plus = at_slow_y_contiguous(u, s, j, c + 1);
        const T centre_here = centre[p + 1][n + 1];
        const T y_minus = centre[p + 1][n], y_plus = centre[p + 1][n + 2];
        const T s_minus = centre[p][n + 1], s_plus = centre[p + 2][n + 1];
        result[p][n] = stencil7_by_role<KokkosLayout>(centre_here, s_minus, s_plus, y_minus, y_plus,
                                                      c_minus, c_plus, a);
      }
    }
    for (int p = 0; p < MS; ++p)
      for (int n = 0; n < M; ++n)
        if (s0 + p < s_end && j0 + n < j_end)
          store_output<Streaming>(&at_slow_y_contiguous(f, s0 + p, j0 + n, c), result[p][n]);
  }
};

// A whole line along the contiguous axis per work item, through raw restrict pointers so that host
// compilers vectorise the inner loop (Kokkos' host MDRange does not). The policy runs over
// (slowest axis, y); LayoutRight lines run along z, LayoutLeft lines along x.
template <class T, class KokkosLayout>
struct LineStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int begin, end;  // the line's range along the contiguous axis

  KOKKOS_INLINE_FUNCTION void operator()(const int slow, const int j) const {
    constexpr bool z_lines = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    const int i = z_lines ? slow : begin;
    const int k = z_lines ? begin : slow;
    const std::ptrdiff_t sx = u.stride(0), sy = u.stride(1), sz = u.stride(2);
    const std::ptrdiff_t start = i * sx + j * sy + k * sz;
    const T* KOKKOS_RESTRICT c = u.data() + start;
    T* KOKKOS_RESTRICT out = f.data() + start;
    const int n = end - begin;
    if (z_lines) {
      for (int q = 0; q < n; ++q)
        out[q] = stencil7(c[q], c[q - sx], c[q + sx], c[q - sy], c[q + sy], c[q - 1], c[q + 1], a);
    } else {
      for (int q = 0; q < n; ++q)
        out[q] = stencil7(c[q], c[q - 1], c[q + 1], c[q - sy], c[q + sy], c[q - sz], c[q + sz], a);
    }
  }
};

// A block of M points along y per work item, marching along the slowest axis through its slab
// (seed 000's kernel 7 taken to its end, "2.5D blocking", with kernel 5's register block along y):
// the M + 2 rows (the block and one row either side) of the planes below, at and above the one
// being updated stay in registers, so a point costs (M + 2) / M loads through the L2 whatever the
// plane size (no last-level-cache cliff) plus its two neighbours along the contiguous axis, which
// the work items beside it in the warp bring into the L1. Each step issues the loads of the step
// after it before it computes and stores its own points, so one step's loads are in flight while
// the previous step's results go out. The policy counts points along the contiguous axis from a
// multiple of column_alignment (the items before c_begin return at once), blocks of M points along
// y and slabs.
template <class T, class KokkosLayout, int M, bool Streaming>
struct MarchStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int j_begin, j_end;        // update range along y
  int slow_begin, slow_end;  // update range along the slowest axis
  int slab;                  // planes per slab
  int c_begin, c_end;        // update range along the contiguous axis

  KOKKOS_INLINE_FUNCTION void operator()(const int c, const int block, const int part) const {
    if (c < c_begin || c >= c_end) return;
    const int first = slow_begin + part * slab;
    const int last = first + slab < slow_end ? first + slab : slow_end;  // exclusive
    const int j0 = j_begin + block * M;
    // Row n holds y index j0 - 1 + n; rows and planes past the update range are loaded clamped
    // (j_end and slow_end are boundary or halo planes, always allocated) and results dropped.
    int row[M + 2];
    for (int n = 0; n < M + 2; ++n) row[n] = j0 - 1 + n <= j_end ? j0 - 1 + n : j_end;
    T below[M + 2], here[M + 2], above[M + 2], c_minus[M], c_plus[M];
    for (int n = 0; n < M + 2; ++n) {
      below[n] = at_slow_y_contiguous(u, first - 1, row[n], c);
      here[n] = at_slow_y_contiguous(u, first, row[n], c);
      above[n] = at_slow_y_contiguous(u, first + 1 <= slow_end ? first + 1 : slow_end, row[n], c);
    }
    for (int n = 0; n < M; ++n) {
      c_minus[n] = at_slow_y_contiguous(u, first, row[n + 1], c - 1);
      c_plus[n] = at_slow_y_contiguous(u, first, row[n + 1], c + 1);
    }
    for (int s = first; s < last; ++s) {
      const int ahead = s + 2 <= slow_end ? s + 2 : slow_end;
      const int next = s + 1 < last ? s + 1 : s;
      T coming[M + 2], next_minus[M], next_plus[M];
      for (int n = 0; n < M + 2; ++n) coming[n] = at_slow_y_contiguous(u, ahead, row[n], c);
      for (int n = 0; n < M; ++n) {
        next_minus[n] = at_slow_y_contiguous(u, next, row[n + 1], c - 1);
        next_plus[n] = at_slow_y_contiguous(u, next, row[n + 1], c + 1);
      }
      for (int n = 0; n < M; ++n)
        if (j0 + n < j_end)
          store_output<Streaming>(
              &at_slow_y_contiguous(f, s, j0 + n, c),
              stencil7_by_role<KokkosLayout>(here[n + 1], below[n + 1], above[n + 1], here[n],
                                             here[n + 2], c_minus[n], c_plus[n], a));
      for (int n = 0; n < M + 2; ++n) {
        below[n] = here[n];
        here[n] = above[n];
        above[n] = coming[n];
      }
      for (int n = 0; n < M; ++n) {
        c_minus[n] = next_minus[n];
        c_plus[n] = next_plus[n];
      }
    }
  }
};

// A thread team per tile of TC (contiguous axis) x TY (y) points, marching through a slab of
// planes along the slowest axis (2.5D blocking through team scratch): each thread keeps the
// centres of its (c, y) column in the planes below, at and above the one being updated in
// registers, and the team shares the plane being updated, with its halo rows along y and halo
// columns along the contiguous axis, through team scratch. A point then costs 1 + 2 / TY loads
// through the L2 plus two single-element halo loads per TC points and the slab's two extra planes,
// against 2.5 for the register block of 4 x 2 points; a thread needs few registers, so many warps
// hide the latency. The plane goes into one of two scratch buffers in turn, so one barrier per
// plane suffices: a thread writes a buffer again only after every thread has passed the barrier of
// the plane in between, that is after every thread has finished reading it. Each step issues the
// loads of the planes it needs next before it computes its own. Threads = the team size: TC x TY
// on GPUs (one column each), 1 on hosts (the thread walks the tile's columns). Rows and planes
// past the update range are loaded clamped and their results dropped.
template <class T, class KokkosLayout, int TC, int TY, int Threads, bool Streaming>
struct ScratchStencil {
  using Member = typename Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace>::member_type;
  using Scratch = Kokkos::View<T*, Kokkos::DefaultExecutionSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int row_length = TC + 2;                  // halo column, TC points, halo column
  static constexpr int plane_count = (TY + 2) * row_length;  // a plane of the tile and its halo
  static constexpr int scratch_count = 2 * plane_count;      // two planes, used in turn
  static constexpr int columns = TC * TY / Threads;          // (c, y) columns per thread

  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int c_origin, c_tiles;  // first (aligned) contiguous index of tile 0, tiles along that axis
  int j_begin, j_end, j_tiles;
  int s_begin, s_end, slab;  // update range along the slowest axis, planes per team
  int c_begin, c_end;

  // Planes loaded beyond the one above the plane being updated: a load is issued lead + 1 steps
  // before its value is used.
  static constexpr int lead = 2;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int tile = member.league_rank();
    const int c0 = c_origin + (tile % c_tiles) * TC;
    const int j0 = j_begin + (tile / c_tiles % j_tiles) * TY;
    const int first = s_begin + tile / c_tiles / j_tiles * slab;
    const int last = first + slab < s_end ? first + slab : s_end;  // exclusive
    T* const planes = Scratch(member.team_scratch(0), scratch_count).data();

    // Per column: its clamped (y, c) indices, those of the halo point it loads along the
    // contiguous axis and along y (none: -1), its scratch slots, whether it is stored.
    int j[columns], c[columns], halo_c[columns], halo_j[columns];
    int slot[columns], halo_c_slot[columns], halo_j_slot[columns];
    bool stored[columns];
    for (int p = 0; p < columns; ++p) {
      const int e = member.team_rank() + p * Threads;
      const int tc = e % TC, ty = e / TC;
      c[p] = clamped(c0 + tc, c_end);
      j[p] = clamped(j0 + ty, j_end);
      slot[p] = (ty + 1) * row_length + tc + 1;
      stored[p] = c0 + tc >= c_begin && c0 + tc < c_end && j0 + ty < j_end;
      halo_c[p] = tc == 0 ? (c0 - 1 < c_begin - 1 ? c_begin - 1 : c0 - 1)
                          : (tc == TC - 1 ? clamped(c0 + TC, c_end) : -1);
      halo_c_slot[p] = tc == 0 ? slot[p] - 1 : slot[p] + 1;
      halo_j[p] = ty == 0 ? j0 - 1 : (ty == TY - 1 ? clamped(j0 + TY, j_end) : -1);
      halo_j_slot[p] = ty == 0 ? slot[p] - row_length : slot[p] + row_length;
    }
    // column[p][q] holds plane s - 1 + q of column p, along_c[p][q] and along_j[p][q] its halo
    // points in plane s + q, at the start of the step that updates plane s.
    T column[columns][3 + lead], along_c[columns][1 + lead], along_j[columns][1 + lead];
    for (int p = 0; p < columns; ++p) {
      for (int q = 0; q < 3 + lead; ++q)
        column[p][q] = at_slow_y_contiguous(u, clamped(first - 1 + q, s_end), j[p], c[p]);
      for (int q = 0; q < 1 + lead; ++q) {
        const int plane = first + q < last ? first + q : last - 1;
        along_c[p][q] = halo_c[p] < 0 ? T(0) : at_slow_y_contiguous(u, plane, j[p], halo_c[p]);
        along_j[p][q] = halo_j[p] < 0 ? T(0) : at_slow_y_contiguous(u, plane, halo_j[p], c[p]);
      }
    }
    for (int s = first; s < last; ++s) {
      T* const plane = planes + ((s - first) & 1) * plane_count;
      const int incoming_plane = clamped(s + 2 + lead, s_end);
      const int incoming_halo_plane = s + 1 + lead < last ? s + 1 + lead : last - 1;
      T incoming[columns], incoming_c[columns], incoming_j[columns];
      for (int p = 0; p < columns; ++p) {
        incoming[p] = at_slow_y_contiguous(u, incoming_plane, j[p], c[p]);
        incoming_c[p] =
            halo_c[p] < 0 ? T(0) : at_slow_y_contiguous(u, incoming_halo_plane, j[p], halo_c[p]);
        incoming_j[p] =
            halo_j[p] < 0 ? T(0) : at_slow_y_contiguous(u, incoming_halo_plane, halo_j[p], c[p]);
        plane[slot[p]] = column[p][1];
        if (halo_c[p] >= 0) plane[halo_c_slot[p]] = along_c[p][0];
        if (halo_j[p] >= 0) plane[halo_j_slot[p]] = along_j[p][0];
      }
      member.team_barrier();
      for (int p = 0; p < columns; ++p) {
        if (stored[p])
          store_output<Streaming>(
              &at_slow_y_contiguous(f, s, j[p], c[p]),
              stencil7_by_role<KokkosLayout>(
                  column[p][1], column[p][0], column[p][2], plane[slot[p] - row_length],
                  plane[slot[p] + row_length], plane[slot[p] - 1], plane[slot[p] + 1], a));
        for (int q = 0; q + 1 < 3 + lead; ++q) column[p][q] = column[p][q + 1];
        column[p][2 + lead] = incoming[p];
        for (int q = 0; q < lead; ++q) {
          along_c[p][q] = along_c[p][q + 1];
          along_j[p][q] = along_j[p][q + 1];
        }
        along_c[p][lead] = incoming_c[p];
        along_j[p][lead] = incoming_j[p];
      }
    }
  }

  // Indices past the update range read the boundary or halo plane at `end`, always allocated.
  KOKKOS_FORCEINLINE_FUNCTION static int clamped(const int index, const int end) {
    return index <= end ? index : end;
  }
};

// The march variant's launch: policy (contiguous index from a multiple of column_alignment,
// blocks of m points along y, slab), tile in that order.
struct MarchPlan {
  Index3 lower{0, 0, 0}, upper{0, 0, 0};
  int j_begin = 0, j_end = 0;
  int slow_begin = 0, slow_end = 0, slab = 0;
  int c_begin = 0, c_end = 0;
};
MarchPlan plan_march(const LaplacianKernelConfig& config, const Grid& grid);
// The march policy's tile for `config` (deck entries of the contiguous axis and y, 1 slab).
std::array<std::int64_t, 3> march_tile(const LaplacianKernelConfig& config);

// The scratch variant's launches, one per y part: tiles start at c_origin (a multiple of
// column_alignment) along the contiguous axis, at j_begin and s_begin along y and the slowest axis.
struct ScratchPlan {
  int c_origin = 0, c_begin = 0, c_end = 0;
  int j_begin = 0, j_end = 0;
  int s_begin = 0, s_end = 0;
};
std::vector<ScratchPlan> plan_scratch(const LaplacianKernelConfig& config, const Grid& grid);

using LinePolicy =
    Kokkos::MDRangePolicy<Kokkos::DefaultExecutionSpace,
                          Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                          Kokkos::IndexType<int>>;

// The line variant's launch over `box` (local indices) for fields of `layout`.
inline LinePolicy line_policy(const Box& box, Layout layout) {
  const int slow = layout == Layout::right ? 0 : 2;
  return LinePolicy({static_cast<int>(box.lo[slow]), static_cast<int>(box.lo[1])},
                    {static_cast<int>(box.hi[slow]), static_cast<int>(box.hi[1])});
}

// Calls body(std::integral_constant<int, V>) for the V of Values equal to `value`; false if none
// is.
template <int... Values, class Body>
bool dispatch_constant(std::int64_t value, Body&& body) {
  return ((value == Values && (body(std::integral_constant<int, Values>{}), true)) || ...);
}

// Calls body(std::true_type) for evict-first stores, body(std::false_type) for plain ones.
template <class Body>
void dispatch_store_kind(bool streaming_stores, Body&& body) {
  if (streaming_stores)
    body(std::true_type{});
  else
    body(std::false_type{});
}

// Calls body(std::integral_constant<int, MS>) for the runtime points per work item along the
// slowest axis.
template <class Body>
void dispatch_slow_points_per_item(int m_slow, Body&& body) {
  if (!dispatch_constant<1, 2, 4>(m_slow, body))
    throw std::invalid_argument(
        "points per work item along the slowest axis (m_slow) must be 1, 2 or 4");
}

// Calls body(std::integral_constant<int, M>) for the runtime points per work item.
template <class Body>
void dispatch_points_per_item(int m, Body&& body) {
  if (!dispatch_constant<1, 2, 4, 8, 16>(m, body))
    throw std::invalid_argument("points per work item (m) must be 1, 2, 4, 8 or 16");
}

template <Kokkos::Iterate Iter, unsigned LaunchBound>
std::array<std::int64_t, 3> resolved_tile(const LaunchPlan& plan,
                                          const std::array<std::int64_t, 3>& tile) {
  return kstencil::resolved_tile<Iter, LaunchBound>(plan.lower, plan.upper, tile);
}

template <Kokkos::Iterate Iter, unsigned LaunchBound>
Policy3<Iter, LaunchBound> make_policy(const LaunchPlan& plan,
                                       const std::array<std::int64_t, 3>& tile) {
  return kstencil::make_policy<Iter, LaunchBound>(plan.lower, plan.upper, tile);
}

template <class T, class KokkosLayout>
void apply_march(const LaplacianKernelConfig& config, const Grid& grid,
                 const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  const MarchPlan plan = plan_march(config, grid);
  if (plan.slab == 0) return;
  const auto a = StencilCoeffs<T>::from_spacing(grid.spacing);
  const LaunchPlan launch{plan.lower, plan.upper};
  const auto tile = march_tile(config);
  dispatch_launch_bound(config.launch_bounds, [&](auto bound) {
    constexpr unsigned Bound = decltype(bound)::value;
    const auto policy = make_policy<Kokkos::Iterate::Left, Bound>(
        launch, resolved_tile<Kokkos::Iterate::Left, Bound>(launch, tile));
    dispatch_points_per_item(config.m, [&](auto points) {
      constexpr int M = decltype(points)::value;
      dispatch_store_kind(config.streaming_stores, [&](auto streaming) {
        Kokkos::parallel_for("kstencil::laplacian::march", policy,
                             MarchStencil<T, KokkosLayout, M, decltype(streaming)::value>{
                                 u, f, a, plan.j_begin, plan.j_end, plan.slow_begin, plan.slow_end,
                                 plan.slab, plan.c_begin, plan.c_end});
      });
    });
  });
}

template <class T, class KokkosLayout>
void apply_scratch(const LaplacianKernelConfig& config, const Grid& grid,
                   const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  const auto a = StencilCoeffs<T>::from_spacing(grid.spacing);
  const ScratchTile tile = scratch_tile(config);
  bool compiled = false;
  dispatch_constant<32, 64, 128>(tile.contiguous, [&](auto tc) {
    compiled = dispatch_constant<2, 4, 8>(tile.y, [&](auto ty) {
      constexpr int TC = decltype(tc)::value, TY = decltype(ty)::value;
      constexpr int Threads = kernels_on_host ? 1 : TC * TY;
      dispatch_store_kind(config.streaming_stores, [&](auto streaming) {
        using Stencil =
            ScratchStencil<T, KokkosLayout, TC, TY, Threads, decltype(streaming)::value>;
        using Policy =
            Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace, Kokkos::LaunchBounds<Threads, 1>>;
        const int slab = static_cast<int>(tile.slow);
        for (const ScratchPlan& plan : plan_scratch(config, grid)) {
          const int c_tiles = (plan.c_end - plan.c_origin + TC - 1) / TC;
          const int j_tiles = (plan.j_end - plan.j_begin + TY - 1) / TY;
          const int slabs = (plan.s_end - plan.s_begin + slab - 1) / slab;
          Policy policy(c_tiles * j_tiles * slabs, Threads);
          policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes<T>(tile)));
          Kokkos::parallel_for(
              "kstencil::laplacian::scratch", policy,
              Stencil{u, f, a, plan.c_origin, c_tiles, plan.j_begin, plan.j_end, j_tiles,
                      plan.s_begin, plan.s_end, slab, plan.c_begin, plan.c_end});
        }
      });
    });
  });
  if (!compiled)
    throw std::invalid_argument(
        "scratch tile must be 32, 64 or 128 points along the contiguous axis and 2, 4 or 8 along "
        "y");
}

template <class T, class KokkosLayout>
void apply(const LaplacianKernelConfig& config, const Grid& grid,
           const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  if (config.variant == LaplacianVariant::march) return apply_march(config, grid, u, f);
  if (config.variant == LaplacianVariant::scratch) return apply_scratch(config, grid, u, f);
  const auto a = StencilCoeffs<T>::from_spacing(grid.spacing);
  if (config.variant == LaplacianVariant::line) {
    const Box box = grid.to_local(laplacian_update_box(grid));
    if (box.empty()) return;
    const int contiguous = config.layout == Layout::right ? 2 : 0;
    Kokkos::parallel_for("kstencil::laplacian::line", line_policy(box, config.layout),
                         LineStencil<T, KokkosLayout>{u, f, a, static_cast<int>(box.lo[contiguous]),
                                                      static_cast<int>(box.hi[contiguous])});
    return;
  }
  const auto plans = plan_launches(config, grid);
  const auto tile = to_policy_order(config.mapping, config.tile);
  dispatch_traits(
      config.mapping, config.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
        constexpr bool Reversed = decltype(reversed)::value;
        // Only LayoutRight fields resolve to the reversed policy order (resolve_mapping); the
        // other layouts' bodies for it are not compiled.
        if constexpr (Reversed && !x_is_slowest<KokkosLayout>()) {
          throw std::invalid_argument("reversed policy order is only used with LayoutRight");
        } else {
          constexpr Kokkos::Iterate Iter = decltype(iterate)::value;
          constexpr unsigned Bound = decltype(bound)::value;
          for (const auto& plan : plans) {
            const auto policy =
                make_policy<Iter, Bound>(plan, resolved_tile<Iter, Bound>(plan, tile));
            if (plan.column) {
              dispatch_points_per_item(config.m, [&](auto points) {
                dispatch_slow_points_per_item(config.m_slow, [&](auto slow_points) {
                  constexpr int M = decltype(points)::value, MS = decltype(slow_points)::value;
                  if constexpr (M * MS > max_block_points) {
                    throw std::invalid_argument("m x m_slow must be at most " +
                                                std::to_string(max_block_points));
                  } else {
                    dispatch_store_kind(config.streaming_stores, [&](auto streaming) {
                      Kokkos::parallel_for(
                          "kstencil::laplacian::register_blocked", policy,
                          ColumnStencil<T, KokkosLayout, Reversed, M, MS,
                                        decltype(streaming)::value>{
                              u, f, a, static_cast<int>(plan.j_begin), static_cast<int>(plan.j_end),
                              static_cast<int>(plan.s_begin), static_cast<int>(plan.s_end),
                              static_cast<int>(plan.c_begin), static_cast<int>(plan.c_end)});
                    });
                  }
                });
              });
            } else {
              Kokkos::parallel_for("kstencil::laplacian::mdrange", policy,
                                   PointStencil<T, KokkosLayout, Reversed>{u, f, a});
            }
          }
        }
      });
}

}  // namespace laplacian_detail
}  // namespace kstencil
