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
#include "laplacian/line_planes_avx512.hpp"

namespace kstencil {
namespace laplacian_detail {

// One launch: bounds in policy order. For column (register-blocked) launches the y dimension counts
// blocks of m points from j_begin and the slowest axis work items of blocks_per_item blocks of
// m_slow points from s_begin; the contiguous axis counts points from a multiple of
// column_alignment below c_begin. A launch that runs several y parts (parts_in_one_launch) counts
// the blocks of one part along y and the items of all parts along the slowest axis, part after
// part: item q runs part q / slow_items_per_part.
struct LaunchPlan {
  Index3 lower{0, 0, 0};
  Index3 upper{0, 0, 0};
  Index j_begin = 0, j_end = 0;  // y range of points updated (local indices)
  Index s_begin = 0, s_end = 0;  // slowest axis' range of points updated (local indices)
  Index c_begin = 0, c_end = 0;  // contiguous axis' range of points updated (local indices)
  bool column = false;
  int blocks_per_item = 1;        // consecutive slowest-axis blocks per column work item
  Index slow_items_per_part = 0;  // column work items along the slowest axis per y part
  Index y_blocks_per_part = 0;    // blocks of m points along y per y part
  bool zero_row_ends = false;  // work items at c_begin - 1 and c_end store 0 (policy covers them)
};

// Column launches start the contiguous axis at a multiple of 32 elements (256 B in double, 128 B in
// float) so that a warp's loads and stores cover whole cache lines and sectors, as seed 000's
// kernel 5 does by giving the boundary point its own idle thread; the work items before the first
// updated point return at once.
inline constexpr Index column_alignment = 32;

// A column launch's policy range along the contiguous axis for updated points [c_begin, c_end):
// from a multiple of column_alignment below them (below c_begin - 1 with row ends) to c_end
// (c_end + 1 with row ends, whose work items store 0 at c_begin - 1 and c_end).
struct ContiguousRange {
  Index lower, upper;
};
inline ContiguousRange column_contiguous_range(const Index c_begin, const Index c_end,
                                               const bool zero_row_ends) {
  const Index first = zero_row_ends ? c_begin - 1 : c_begin;
  return {first / column_alignment * column_alignment, zero_row_ends ? c_end + 1 : c_end};
}

std::vector<LaunchPlan> plan_launches(const LaplacianKernelConfig& config, const Grid& grid);

// x / d for 0 <= x < 2^31 as a multiply and a shift: with k = 32 + ceil(log2 d) and
// m = ceil(2^k / d) = (2^k + e) / d, 0 <= e < d, x m / 2^k = x / d + x e / (d 2^k); since
// x e < 2^31 d <= 2^k the excess stays below 1 / d, so the floor is that of x / d, and m <= 2^33
// keeps x m within 64 bits. The column kernels find a work item's y part so: with a division ptxas
// gave the layout-right double body 158 registers instead of 116 (3 blocks of 128 threads per SM,
// not 4; 0.86 of memcpy instead of 0.96 at 1024^3), with the multiply 118.
struct Divisor {
  unsigned long long multiplier = 1;
  int shift = 0;

  Divisor() = default;
  explicit Divisor(const Index d) {
    if (d < 1 || d > (Index(1) << 31)) throw std::invalid_argument("divisor out of range");
    int log2_ceil = 0;
    while ((Index(1) << log2_ceil) < d) ++log2_ceil;
    shift = 32 + log2_ceil;
    multiplier =
        static_cast<unsigned long long>(((static_cast<unsigned __int128>(1) << shift) + d - 1) / d);
  }
  KOKKOS_FORCEINLINE_FUNCTION int divide(const int x) const {
    return static_cast<int>((static_cast<unsigned long long>(x) * multiplier) >> shift);
  }
};

// The kernels' views of the fields: u and f never alias, so loads may move past stores (without
// this a work item's next loads wait for its previous store), and u goes through the read-only
// cache on GPUs.
template <class T, class KokkosLayout>
using StencilInput = Kokkos::View<const T***, KokkosLayout,
                                  Kokkos::MemoryTraits<Kokkos::Restrict | Kokkos::RandomAccess>>;
template <class T, class KokkosLayout>
using StencilOutput = Kokkos::View<T***, KokkosLayout, Kokkos::MemoryTraits<Kokkos::Restrict>>;

// v at slowest-axis index s, y index j, contiguous index c.
template <class View>
KOKKOS_FORCEINLINE_FUNCTION decltype(auto) at_slow_y_contiguous(const View& v, const int s,
                                                                const int j, const int c) {
  return x_is_slowest<typename View::array_layout>() ? v(s, j, c) : v(c, j, s);
}

// Offset of (slowest-axis index s, y index j, contiguous index c) from v.data().
template <class View>
KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t offset_slow_y_contiguous(const View& v, const int s,
                                                                    const int j, const int c) {
  const bool x_slowest = x_is_slowest<typename View::array_layout>();
  return static_cast<std::ptrdiff_t>(x_slowest ? s : c) * v.stride(0) +
         static_cast<std::ptrdiff_t>(j) * v.stride(1) +
         static_cast<std::ptrdiff_t>(x_slowest ? c : s) * v.stride(2);
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
// Several y parts in one launch: the slowest-axis policy index runs part after part, and a GPU
// schedules that policy dimension last (blockIdx.z), so the parts run in order as kernel 7's
// launches do, without each launch's ramp and last wave (64 MiB planes, 16 parts: +2.2 to +2.5%).
// zero_row_ends: the work items at c_begin - 1 and c_end (boundary or halo points) run the same
// loads and store 0 instead of their result, so the stores of a warp cover each row's first and
// last 32-byte sectors whole. A sector the kernel writes only partly costs the L2 a DRAM read to
// merge it (H100 with ECC: exactly 2 sectors per row, 12% of the DRAM reads on 64-point rows,
// 3% on 256-point rows; Nsight Compute, docs/PERFORMANCE.md, eleventh run).
template <class T, class KokkosLayout, bool Reversed, int M, int MS, bool Streaming>
struct ColumnStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int j_begin, j_end;   // update range along y
  int s_begin, s_end;   // update range along the slowest axis (x in LayoutRight, z in LayoutLeft)
  int c_begin, c_end;   // update range along the contiguous axis; the policy starts aligned below
  int blocks_per_item;  // consecutive blocks along the slowest axis per work item
  // Work items along the slowest axis and blocks along y per y part: the policy's slowest-axis
  // index q runs part q / slow_items_per_part (one launch for several parts; else part 0).
  int slow_items_per_part, y_blocks_per_part;
  Divisor by_slow_items_per_part;
  bool zero_row_ends;  // the work items at c_begin - 1 and c_end store 0

  static constexpr bool x_slowest = x_is_slowest<KokkosLayout>();

  KOKKOS_INLINE_FUNCTION void operator()(const int p0, const int block, const int p2) const {
    const int x_index = Reversed ? p2 : p0;
    const int z_index = Reversed ? p0 : p2;
    const int c = x_slowest ? z_index : x_index;
    const bool row_end = zero_row_ends && (c == c_begin - 1 || c == c_end);
    if (!row_end && (c < c_begin || c >= c_end)) return;
    // A row end loads around the row's nearest updated point (its result is not stored).
    const int load_c = row_end ? (c < c_begin ? c_begin : c_end - 1) : c;
    const int slow_item = x_slowest ? x_index : z_index;
    const int part = by_slow_items_per_part.divide(slow_item);
    const int j0 = j_begin + (part * y_blocks_per_part + block) * M;
    // One block after another: each block's loads are independent of the previous block's
    // results, and the rows it shares with that block were loaded moments before, so the L1 can
    // serve them instead of the L2 (not unrolled: that would multiply the registers).
    const int first_block = (slow_item - part * slow_items_per_part) * blocks_per_item;
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
    for (int block_along_slow = 0; block_along_slow < blocks_per_item; ++block_along_slow) {
      const int s0 = s_begin + (first_block + block_along_slow) * MS;
      // Past the end; the last y part may hold fewer blocks than the others (checked here, not
      // before the loop, where it cost the float layout-right body a block per SM).
      if (s0 >= s_end || j0 >= j_end) return;
      one_block(s0, j0, load_c, c, row_end);
    }
  }

  KOKKOS_INLINE_FUNCTION void one_block(const int s0, const int j0, const int load_c, const int c,
                                        const bool row_end) const {
    // Rows past the update range are loaded clamped (s_end and j_end are boundary or halo planes,
    // always allocated) and their results dropped.
    // LayoutRight loads through stride offsets from one base pointer: fewer index instructions
    // (H100, 512^3 and 2048x1024x256 double: +1-2%; PERFORMANCE.md, ninth run). LayoutLeft keeps
    // the View's arithmetic, which needs fewer registers there: offsets took 138 (3 blocks per SM)
    // and lost 7%.
    [[maybe_unused]] const T* KOKKOS_RESTRICT const in = u.data() + load_c;
    [[maybe_unused]] const std::ptrdiff_t slow_stride = u.stride(0), y_stride = u.stride(1);
    const auto load = [&](const int s, const int j, const int dc) -> T {
      if constexpr (x_slowest)
        return in[s * slow_stride + j * y_stride + dc];
      else
        return at_slow_y_contiguous(u, s, j, load_c + dc);
    };
    T centre[MS + 2][M + 2];
    for (int p = 0; p < MS + 2; ++p) {
      const int s = s0 - 1 + p <= s_end ? s0 - 1 + p : s_end;
      for (int n = 0; n < M + 2; ++n) {
        const bool corner = (p == 0 || p == MS + 1) && (n == 0 || n == M + 1);
        const int j = j0 - 1 + n <= j_end ? j0 - 1 + n : j_end;
        centre[p][n] = corner ? T(0) : load(s, j, 0);
      }
    }
    T result[MS][M];
    for (int p = 0; p < MS; ++p) {
      const int s = s0 + p < s_end ? s0 + p : s_end - 1;
      for (int n = 0; n < M; ++n) {
        const int j = j0 + n < j_end ? j0 + n : j_end - 1;
        const T c_minus = load(s, j, -1);
        const T c_plus = load(s, j, 1);
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
          store_output<Streaming>(&at_slow_y_contiguous(f, s0 + p, j0 + n, c),
                                  row_end ? T(0) : result[p][n]);
  }
};

// Whole lines along the contiguous axis, a block of `rows` consecutive rows (y) of Planes
// consecutive planes per work item, through raw restrict pointers so that host compilers vectorise
// the inner loop (Kokkos' host MDRange does not). The policy runs over (blocks of Planes planes
// along the slowest axis, row blocks); LayoutRight lines run along z, LayoutLeft lines along x.
// With Streaming, AVX hosts write each line's whole cache lines with non-temporal stores and fence
// once per work item: in the development machine's probe a fence per row cost 8% at 384^3 and one
// per plane nothing measurable (docs/PERFORMANCE.md), so the host default's work items hold 16
// rows. With AVX-512 a row's planes go through stencil_lines_avx512 together (their centre lines
// loaded once for all of them); elsewhere, or where the planes' lines start at different offsets
// from a cache-line boundary, plane by plane. zero_row_ends: each row's points either side
// (boundary or halo points) get 0, so that where the row with them fills whole cache lines the
// host streams every line instead of storing the partial first and last ones point by point.
template <class T, class KokkosLayout, bool Streaming, int Planes>
struct LineStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int begin, end;            // the lines' range along the contiguous axis
  int j_begin, j_end;        // the rows updated
  int slow_begin, slow_end;  // the planes updated
  int rows;                  // rows per work item
  bool zero_row_ends;        // also store 0 at the points before and after each row

  KOKKOS_INLINE_FUNCTION void operator()(const int plane_block, const int block) const {
    constexpr bool z_lines = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    const std::ptrdiff_t sx = u.stride(0), sy = u.stride(1), sz = u.stride(2);
    const std::ptrdiff_t s_stride = z_lines ? sx : sz;
    const int first_plane = slow_begin + plane_block * Planes;
    const int planes = first_plane + Planes <= slow_end ? Planes : slow_end - first_plane;
    const int n = end - begin;
    const int j_first = j_begin + block * rows;
    const int j_last = j_first + rows < j_end ? j_first + rows : j_end;  // exclusive
    // A local copy: read through `this`, g++ reloads the coefficients for every vector because the
    // non-temporal stores might alias them (4 more of the loop's 19 loads per cache line of f).
    const StencilCoeffs<T> coeffs = a;
    for (int j = j_first; j < j_last; ++j) {
      const std::ptrdiff_t start =
          (z_lines ? first_plane * sx + begin * sz : begin * sx + first_plane * sz) + j * sy;
      const T* KOKKOS_RESTRICT c = u.data() + start;
      T* KOKKOS_RESTRICT out = f.data() + start;
#ifdef KSTENCIL_HOST_AVX512_LINES
      if (Streaming) {
        if (planes == Planes && (Planes == 1 || s_stride * sizeof(T) % cache_line_bytes == 0)) {
          stencil_lines_avx512<Planes, KokkosLayout>(c, out, n, s_stride, sy, coeffs,
                                                     zero_row_ends);
        } else {
          for (int p = 0; p < planes; ++p)
            stencil_lines_avx512<1, KokkosLayout>(c + p * s_stride, out + p * s_stride, n, s_stride,
                                                  sy, coeffs, zero_row_ends);
        }
        continue;
      }
#endif
      for (int p = 0; p < planes; ++p) {
        const T* KOKKOS_RESTRICT cp = c + p * s_stride;
        store_line<Streaming>(
            out + p * s_stride, n,
            [cp, s_stride, sy, coeffs](const int q) {
              return stencil7_by_role<KokkosLayout>(cp[q], cp[q - s_stride], cp[q + s_stride],
                                                    cp[q - sy], cp[q + sy], cp[q - 1], cp[q + 1],
                                                    coeffs);
            },
            cp + s_stride, zero_row_ends);
      }
    }
    fence_streamed_stores<Streaming>();
  }
};

// A block of M points along y per work item, marching along the slowest axis through its slab
// (seed 000's kernel 7 taken to its end, "2.5D blocking", with kernel 5's register block along y):
// the M + 2 rows (the block and one row either side) of the planes below, at and above the one
// being updated stay in registers, so a point costs (M + 2) / M loads through the L2 whatever the
// plane size (no last-level-cache cliff) plus its two neighbours along the contiguous axis, which
// the work items beside it in the warp bring into the L1. Each step issues the loads of the step
// after it before it computes and stores its own points, so one step's loads are in flight while
// the previous step's results go out (the rolled loop's rotation then waits for them at the step's
// end; unrolled by its period the body needs 244-255 registers and is slower, docs/PERFORMANCE.md).
// The policy counts points along the contiguous axis from a multiple of column_alignment (the items
// before c_begin return at once), blocks of M points along y and slabs.
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
// through the L2 plus two halo sectors per TC points and the slab's two extra planes, against
// 2.5 for the register block of 4 x 2 points. The 2 TC + 2 TY halo points of a plane are dealt to
// the threads one each (on GPUs), so a thread carries one column and at most one halo point, its
// offsets computed once, in 40 registers under the launch bound apply_scratch sets. The plane goes
// into one of two scratch buffers in turn, so one barrier per plane suffices: a thread writes a
// buffer again only after every thread has passed the barrier of the plane in between, that is
// after every thread has finished reading it. Each step issues the loads of the planes lead + 2
// ahead before it computes its own; the rolled loop moves them into the rotating registers at the
// step's end, so they are in flight during the step's barrier and stores only (unrolling the loop
// by the rotation's period removed the moves but took more registers and was slower,
// docs/PERFORMANCE.md). Threads = the team size: TC x TY on GPUs (one column each), 1 on hosts (the
// thread walks the tile's columns). Rows and planes past the update range are loaded clamped,
// results dropped.
template <class T, class KokkosLayout, int TC, int TY, int Threads, bool Streaming>
struct ScratchStencil {
  using Member = typename Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace>::member_type;
  using Scratch = Kokkos::View<T*, Kokkos::DefaultExecutionSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int row_length = TC + 2;                  // halo column, TC points, halo column
  static constexpr int plane_count = (TY + 2) * row_length;  // a plane of the tile and its halo
  static constexpr int scratch_count = 2 * plane_count;      // two planes, used in turn
  static constexpr int columns = TC * TY / Threads;          // (c, y) columns per thread
  static constexpr int halo_points = 2 * TC + 2 * TY;        // rows j0 - 1, j0 + TY; columns
  static constexpr int halo_jobs = (halo_points + Threads - 1) / Threads;  // per thread
  static constexpr int lead = 1;
  static constexpr int depth = 3 + lead;  // planes of a column held: below, at, above, coming

  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  StencilCoeffs<T> a;
  int c_origin, c_tiles;  // first (aligned) contiguous index of tile 0, tiles along that axis
  int j_begin, j_end, j_tiles;
  int s_begin, s_end, slab;  // update range along the slowest axis, planes per team
  int c_begin, c_end;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int tile = member.league_rank();
    const int c0 = c_origin + (tile % c_tiles) * TC;
    const int j0 = j_begin + (tile / c_tiles % j_tiles) * TY;
    const int first = s_begin + tile / c_tiles / j_tiles * slab;
    const int last = first + slab < s_end ? first + slab : s_end;  // exclusive
    T* const planes = Scratch(member.team_scratch(0), scratch_count).data();
    const T* KOKKOS_RESTRICT const in = u.data();
    const std::ptrdiff_t plane_stride = x_is_slowest<KokkosLayout>() ? u.stride(0) : u.stride(2);

    // Offsets of plane 0 of each column and halo point, their scratch slots, stored or not.
    std::ptrdiff_t column_at[columns], halo_at[halo_jobs];
    int slot[columns], halo_slot[halo_jobs];
    bool stored[columns], has_halo[halo_jobs];
    for (int p = 0; p < columns; ++p) {
      const int e = member.team_rank() + p * Threads;
      const int tc = e % TC, ty = e / TC;
      column_at[p] =
          offset_slow_y_contiguous(u, 0, clamped(j0 + ty, j_end), clamped(c0 + tc, c_end));
      slot[p] = (ty + 1) * row_length + tc + 1;
      stored[p] = c0 + tc >= c_begin && c0 + tc < c_end && j0 + ty < j_end;
    }
    for (int h = 0; h < halo_jobs; ++h) {
      const int e = member.team_rank() + h * Threads;
      int hj, hc;
      has_halo[h] = e < halo_points;
      if (e < 2 * TC) {  // row j0 - 1 or j0 + TY
        const int tc = e % TC;
        const bool upper = e >= TC;
        hj = upper ? clamped(j0 + TY, j_end) : j0 - 1;
        hc = clamped(c0 + tc, c_end);
        halo_slot[h] = (upper ? TY + 1 : 0) * row_length + tc + 1;
      } else {  // column c0 - 1 or c0 + TC
        const int ty = (e - 2 * TC) % TY;
        const bool upper = e - 2 * TC >= TY;
        hj = clamped(j0 + ty, j_end);
        hc = upper ? clamped(c0 + TC, c_end) : (c0 - 1 < c_begin - 1 ? c_begin - 1 : c0 - 1);
        halo_slot[h] = (ty + 1) * row_length + (upper ? TC + 1 : 0);
      }
      halo_at[h] = has_halo[h] ? offset_slow_y_contiguous(u, 0, hj, hc) : 0;
    }
    // column[p][q] holds plane s - 1 + q of column p, halo[h][q] halo point h in plane s + q, at
    // the start of the step that updates plane s.
    T column[columns][depth], halo[halo_jobs][1 + lead];
    for (int p = 0; p < columns; ++p)
      for (int q = 0; q < depth; ++q)
        column[p][q] = in[column_at[p] + clamped(first - 1 + q, s_end) * plane_stride];
    for (int h = 0; h < halo_jobs; ++h)
      for (int q = 0; q < 1 + lead; ++q)
        halo[h][q] = has_halo[h]
                         ? in[halo_at[h] + (first + q < last ? first + q : last - 1) * plane_stride]
                         : T(0);
    for (int s = first; s < last; ++s) {
      T* const plane = planes + ((s - first) & 1) * plane_count;
      const std::ptrdiff_t incoming = clamped(s + depth - 1, s_end) * plane_stride;
      const std::ptrdiff_t incoming_halo =
          (s + 1 + lead < last ? s + 1 + lead : last - 1) * plane_stride;
      T coming[columns], coming_halo[halo_jobs];
      for (int p = 0; p < columns; ++p) coming[p] = in[column_at[p] + incoming];
      for (int h = 0; h < halo_jobs; ++h)
        coming_halo[h] = has_halo[h] ? in[halo_at[h] + incoming_halo] : T(0);
      for (int p = 0; p < columns; ++p) plane[slot[p]] = column[p][1];
      for (int h = 0; h < halo_jobs; ++h)
        if (has_halo[h]) plane[halo_slot[h]] = halo[h][0];
      member.team_barrier();
      for (int p = 0; p < columns; ++p) {
        if (stored[p])
          store_output<Streaming>(
              f.data() + column_at[p] + s * plane_stride,
              stencil7_by_role<KokkosLayout>(
                  column[p][1], column[p][0], column[p][2], plane[slot[p] - row_length],
                  plane[slot[p] + row_length], plane[slot[p] - 1], plane[slot[p] + 1], a));
        for (int q = 0; q + 1 < depth; ++q) column[p][q] = column[p][q + 1];
        column[p][depth - 1] = coming[p];
      }
      for (int h = 0; h < halo_jobs; ++h) {
        for (int q = 0; q < lead; ++q) halo[h][q] = halo[h][q + 1];
        halo[h][lead] = coming_halo[h];
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

// The line variant's launch over `box` (local indices) for fields of `layout` in work items of
// `rows` rows of `planes` planes, tiled by `axis_tile` (x, y, z; the slowest axis' entry in planes,
// rounded up to whole work items, y's in work items, 0 = Kokkos' default: 2 work items along the
// slowest axis by all of a plane's work items on hosts). Within a tile a thread sweeps the tile's
// rows of one block of planes, then of the next, so a tile of a few rows by many planes marches a
// block of rows through the planes and reads each plane's rows as neighbours from the L2 (2.5D
// blocking: the host default on hosts with 8 or more hardware threads, and with 4 planes per work
// item on AVX-512 hosts with fewer; with one plane per work item on the Zen 3 development machine
// slower than Kokkos' default tile, docs/PERFORMANCE.md).
inline LinePolicy line_policy(const Box& box, Layout layout, const int rows, const int planes,
                              const std::array<std::int64_t, 3>& axis_tile) {
  const int slow = layout == Layout::right ? 0 : 2;
  const Index blocks = (box.extent(1) + rows - 1) / rows;
  const Index plane_blocks = (box.extent(slow) + planes - 1) / planes;
  const Index tile_plane_blocks = (axis_tile[slow] + planes - 1) / planes;
  return LinePolicy({0, 0}, {static_cast<int>(plane_blocks), static_cast<int>(blocks)},
                    {static_cast<int>(tile_plane_blocks), static_cast<int>(axis_tile[1])});
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
  // The kernel addresses u and f by the same offsets.
  for (int d = 0; d < 3; ++d)
    if (u.extent(d) != f.extent(d) || u.stride(d) != f.stride(d))
      throw std::invalid_argument("scratch variant: u and f must have the same shape");
  bool compiled = false;
  dispatch_constant<32, 64, 128>(tile.contiguous, [&](auto tc) {
    compiled = dispatch_constant<2, 4, 8>(tile.y, [&](auto ty) {
      constexpr int TC = decltype(tc)::value, TY = decltype(ty)::value;
      constexpr int Threads = kernels_on_host ? 1 : TC * TY;
      dispatch_store_kind(config.streaming_stores, [&](auto streaming) {
        using Stencil =
            ScratchStencil<T, KokkosLayout, TC, TY, Threads, decltype(streaming)::value>;
        // Blocks per SM for 1536 threads: caps registers at 40 (H100, 2026-11-23: without a cap
        // ptxas takes 62-78, which leaves 512-thread teams one block per SM and 0.57-0.60 of
        // memcpy; a cap of 32 for 2048 threads spills, 0.34-0.66; docs/PERFORMANCE.md).
        constexpr unsigned MinBlocks = Threads < 1536 ? 1536 / Threads : 1;
        using Policy = Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace,
                                          Kokkos::LaunchBounds<Threads, MinBlocks>>;
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
    const int slow = 2 - contiguous;
    dispatch_store_kind(config.streaming_stores, [&](auto streaming) {
      dispatch_slow_points_per_item(config.m_slow, [&](auto planes) {
        Kokkos::parallel_for(
            "kstencil::laplacian::line",
            line_policy(box, config.layout, config.m, config.m_slow, config.tile),
            LineStencil<T, KokkosLayout, decltype(streaming)::value, decltype(planes)::value>{
                u, f, a, static_cast<int>(box.lo[contiguous]), static_cast<int>(box.hi[contiguous]),
                static_cast<int>(box.lo[1]), static_cast<int>(box.hi[1]),
                static_cast<int>(box.lo[slow]), static_cast<int>(box.hi[slow]), config.m,
                config.zero_row_ends});
      });
    });
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
                              static_cast<int>(plan.c_begin), static_cast<int>(plan.c_end),
                              plan.blocks_per_item, static_cast<int>(plan.slow_items_per_part),
                              static_cast<int>(plan.y_blocks_per_part),
                              Divisor(plan.slow_items_per_part), plan.zero_row_ends});
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
