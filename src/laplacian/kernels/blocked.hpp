#pragma once
// blocked: a block of m points along y by m_slow along the slowest axis per work item, registers
// shared between the block's points (seed 000's kernel 5), blocks_per_item blocks one after
// another along the slowest axis, and the y range in parts run one after another (kernel 7).
#include <stdexcept>
#include <string>

#include "core/field.hpp"
#include "core/packets.hpp"
#include "core/policy.hpp"
#include "core/stores.hpp"
#include "laplacian/kernels/common.hpp"
#include "laplacian/plan.hpp"

namespace kstencil {
namespace laplacian_kernels {

// x / d for 0 <= x < 2^31 as a multiply and a shift: with k = 32 + ceil(log2 d) and
// m = ceil(2^k / d) = (2^k + e) / d, 0 <= e < d, x m / 2^k = x / d + x e / (d 2^k); since
// x e < 2^31 d <= 2^k the excess stays below 1 / d, so the floor is that of x / d, and m <= 2^33
// keeps x m within 64 bits. The blocked kernel finds a work item's y part so: a division cost the
// layout-right double body 40 registers and an SM a block (docs/PERFORMANCE.md).
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

// What ColumnStencil computes at a point, from its centre and six neighbours (by axis role) and its
// position (slowest-axis index s, y index j, contiguous index c). A Point also says what a row end
// stores (given a loader of the row end's own input value), which block shapes m x m_slow and
// store kinds are compiled for it (each is a kernel per launch trait: build time) and, where
// Point::sums, adds each point's contribution to a per-work-item sum and writes it (Jacobi's
// norm: src/jacobi/).
// The Laplacian's: f = lap u, 0 at the row ends, no sum.
template <class T, class KokkosLayout>
struct LaplacianPoint {
  StencilCoeffs<T> a;
  static constexpr bool sums = false;
  struct Sum {};
  KOKKOS_FORCEINLINE_FUNCTION T operator()(const T centre, const T s_minus, const T s_plus,
                                           const T y_minus, const T y_plus, const T c_minus,
                                           const T c_plus, int, int, int) const {
    return stencil7_by_role<KokkosLayout>(centre, s_minus, s_plus, y_minus, y_plus, c_minus, c_plus,
                                          a);
  }
  template <class Load>
  KOKKOS_FORCEINLINE_FUNCTION T row_end(const Load&) const {
    return T(0);
  }
  KOKKOS_FORCEINLINE_FUNCTION void add(Sum&, T, T) const {}
  KOKKOS_FORCEINLINE_FUNCTION void finish(int, int, int, const Sum&) const {}
  // The kernels compiled: every block shape that does not spill, both store kinds; in runs along
  // the contiguous axis those of blocked_runs_compiled (each kernel is compiled per launch trait:
  // build time).
  template <int M, int MS, int MC, bool Streaming>
  static constexpr bool compiled() {
    if constexpr (MC == 1) return M * MS <= max_block_points;
    return blocked_runs_compiled(MC, M, MS, Streaming, sizeof(T));
  }
  static std::string compiled_kernels() {
    return "m x m_slow must be at most " + std::to_string(max_block_points) +
           "; with m_contiguous = 2 m x m_slow must be 4 or 8, with 4 (float only) 4 x 2, and "
           "stores streaming";
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
// Y parts (kernel 7) run in one launch: the slowest-axis policy index runs part after part, and a
// GPU schedules that policy dimension last (blockIdx.z), so the parts run in order without a
// launch's ramp and tail each.
// zero_row_ends: the work items at c_begin - 1 and c_end (boundary or halo points) store the
// Point's row-end value (the Laplacian 0), so a warp's stores cover each row's first and last
// 32-byte sectors whole (a partly written sector costs the L2 a DRAM read; docs/PERFORMANCE.md).
// MC = 2 or 4: a work item updates a run of MC neighbouring points of the contiguous axis (the
// policy counts runs there), each of its loads and stores one access of MC values
// (core/packets.hpp: pairs, or float quads of 16 bytes); the fields' contiguous extent must be a
// multiple of MC, so that every run is aligned.
template <class T, class KokkosLayout, bool Reversed, int M, int MS, int MC, bool Streaming,
          class Point = LaplacianPoint<T, KokkosLayout>>
struct ColumnStencil {
  StencilInput<T, KokkosLayout> u;
  StencilOutput<T, KokkosLayout> f;
  Point point;
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
    typename Point::Sum sum{};
    blocks(p0, block, p2, sum);
    if constexpr (Point::sums) {
      const int x_index = Reversed ? p2 : p0;
      const int z_index = Reversed ? p0 : p2;
      point.finish(x_slowest ? x_index : z_index, block, x_slowest ? z_index : x_index, sum);
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION void blocks(const int p0, const int block, const int p2,
                                          typename Point::Sum& sum) const {
    const int x_index = Reversed ? p2 : p0;
    const int z_index = Reversed ? p0 : p2;
    const int c = (x_slowest ? z_index : x_index) * MC;
    if constexpr (MC == 1) {
      const bool row_end = zero_row_ends && (c == c_begin - 1 || c == c_end);
      if (!row_end && (c < c_begin || c >= c_end)) return;
      // A row end loads around the row's nearest updated point and stores the Point's row-end
      // value.
      const int load_c = row_end ? (c < c_begin ? c_begin : c_end - 1) : c;
      along_slow(x_index, z_index, block,
                 [&](const int s0, const int j0) { one_block(s0, j0, load_c, c, row_end, sum); });
    } else {
      RunRoles roles;
      bool any = false;
      for (int e = 0; e < MC; ++e) {
        roles.row_end[e] = zero_row_ends && (c + e == c_begin - 1 || c + e == c_end);
        roles.updated[e] = c + e >= c_begin && c + e < c_end;
        any = any || roles.row_end[e] || roles.updated[e];
      }
      if (!any) return;
      along_slow(x_index, z_index, block,
                 [&](const int s0, const int j0) { run_block(s0, j0, c, roles, sum); });
    }
  }

  // Calls one(s0, j0) for each block of the work item, along the slowest axis.
  template <class One>
  KOKKOS_FORCEINLINE_FUNCTION void along_slow(const int x_index, const int z_index, const int block,
                                              const One& one) const {
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
      one(s0, j0);
    }
  }

  KOKKOS_INLINE_FUNCTION void one_block(const int s0, const int j0, const int load_c, const int c,
                                        const bool row_end, typename Point::Sum& sum) const {
    // Rows past the update range are loaded clamped (s_end and j_end are boundary or halo planes,
    // always allocated) and their results dropped. LayoutRight loads through stride offsets from
    // one base pointer (fewer index instructions); LayoutLeft keeps the View's arithmetic, which
    // needs fewer registers there (docs/PERFORMANCE.md, registers).
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
        result[p][n] =
            point(centre_here, s_minus, s_plus, y_minus, y_plus, c_minus, c_plus, s, j, load_c);
      }
    }
    for (int p = 0; p < MS; ++p)
      for (int n = 0; n < M; ++n)
        if (s0 + p < s_end && j0 + n < j_end) {
          if (!row_end) point.add(sum, result[p][n], centre[p + 1][n + 1]);
          store_output<Streaming>(
              &at_slow_y_contiguous(f, s0 + p, j0 + n, c),
              row_end ? point.row_end([&] { return load(s0 + p, j0 + n, c - load_c); })
                      : result[p][n]);
        }
  }

  // What each point of a run is: updated, a row end (stores the Point's row-end value), or
  // neither (left alone).
  struct RunRoles {
    bool updated[MC], row_end[MC];
  };

  // A block of runs of MC points at contiguous indices c to c + MC - 1 (c a multiple of MC).
  // Runs are always inside a row (the extent is a multiple of MC); the neighbours c - 1 and
  // c + MC are loaded clamped to the row, which changes only results that are dropped (a point at
  // 0 or at the last index is never updated).
  KOKKOS_INLINE_FUNCTION void run_block(const int s0, const int j0, const int c,
                                        const RunRoles& roles, typename Point::Sum& sum) const {
    const T* KOKKOS_RESTRICT const in = u.data();
    const std::ptrdiff_t slow_stride = x_slowest ? u.stride(0) : u.stride(2);
    const std::ptrdiff_t y_stride = u.stride(1);
    const int c_last = static_cast<int>(x_slowest ? u.extent(2) : u.extent(0)) - 1;
    const int c_minus_at = c > 0 ? c - 1 : 0, c_plus_at = c + MC <= c_last ? c + MC : c_last;
    const auto row = [&](const int s, const int j) { return in + s * slow_stride + j * y_stride; };
    Run<T, MC> centre[MS + 2][M + 2];
    for (int p = 0; p < MS + 2; ++p) {
      const int s = s0 - 1 + p <= s_end ? s0 - 1 + p : s_end;
      for (int n = 0; n < M + 2; ++n) {
        const bool corner = (p == 0 || p == MS + 1) && (n == 0 || n == M + 1);
        const int j = j0 - 1 + n <= j_end ? j0 - 1 + n : j_end;
        centre[p][n] = corner ? Run<T, MC>{} : load_run<MC>(row(s, j) + c);
      }
    }
    Run<T, MC> result[MS][M];
    for (int p = 0; p < MS; ++p) {
      const int s = s0 + p < s_end ? s0 + p : s_end - 1;
      for (int n = 0; n < M; ++n) {
        const int j = j0 + n < j_end ? j0 + n : j_end - 1;
        const T c_minus = row(s, j)[c_minus_at];
        const T c_plus = row(s, j)[c_plus_at];
        const Run<T, MC>& here = centre[p + 1][n + 1];
        const Run<T, MC>&y_minus = centre[p + 1][n], &y_plus = centre[p + 1][n + 2];
        const Run<T, MC>&s_minus = centre[p][n + 1], &s_plus = centre[p + 2][n + 1];
        for (int e = 0; e < MC; ++e)
          result[p][n].v[e] = point(here.v[e], s_minus.v[e], s_plus.v[e], y_minus.v[e], y_plus.v[e],
                                    e > 0 ? here.v[e - 1] : c_minus,
                                    e + 1 < MC ? here.v[e + 1] : c_plus, s, j, c + e);
      }
    }
    bool stores_all = true;
    for (int e = 0; e < MC; ++e) stores_all = stores_all && (roles.updated[e] || roles.row_end[e]);
    for (int p = 0; p < MS; ++p)
      for (int n = 0; n < M; ++n)
        if (s0 + p < s_end && j0 + n < j_end) {
          const Run<T, MC>& here = centre[p + 1][n + 1];
          Run<T, MC> out;
          for (int e = 0; e < MC; ++e) {
            if (roles.updated[e]) point.add(sum, result[p][n].v[e], here.v[e]);
            out.v[e] =
                roles.row_end[e] ? point.row_end([&] { return here.v[e]; }) : result[p][n].v[e];
          }
          T* const to = &at_slow_y_contiguous(f, s0 + p, j0 + n, c);
          if (stores_all) {
            store_run<Streaming>(to, out);
          } else {
            for (int e = 0; e < MC; ++e)
              if (roles.updated[e] || roles.row_end[e]) store_output<Streaming>(to + e, out.v[e]);
          }
        }
  }
};

// The blocked launch of `plan` computing `point` at every updated point (u -> f).
template <class T, class KokkosLayout, class Point>
void launch_blocked(const char* label, const LaplacianPlan& plan, const Point& point,
                    const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  const LaplacianKernelParams& p = plan.params;
  const LaplacianLaunch& l = *plan.launch;
  dispatch_traits(plan.mapping, p.launch_bounds, [&](auto reversed, auto iterate, auto bound) {
    constexpr bool Reversed = decltype(reversed)::value;
    // Only LayoutRight fields resolve to the reversed order (resolve_mapping).
    if constexpr (Reversed && !x_is_slowest<KokkosLayout>()) {
      throw std::invalid_argument("reversed policy order with LayoutLeft");
    } else {
      const auto policy = planned_policy<decltype(iterate)::value, decltype(bound)::value>(
          l.lower, l.upper, l.tile);
      dispatch_points_per_item(p.m, [&](auto points) {
        dispatch_slow_points_per_item(p.m_slow, [&](auto slow_points) {
          dispatch_contiguous_points_per_item(p.m_contiguous, [&](auto contiguous_points) {
            constexpr int M = decltype(points)::value, MS = decltype(slow_points)::value;
            constexpr int MC = decltype(contiguous_points)::value;
            dispatch_store_kind(p.streaming_stores, [&](auto streaming) {
              constexpr bool Streaming = decltype(streaming)::value;
              if constexpr (!Point::template compiled<M, MS, MC, Streaming>()) {
                throw std::invalid_argument(Point::compiled_kernels());
              } else {
                Kokkos::parallel_for(
                    label, policy,
                    ColumnStencil<T, KokkosLayout, Reversed, M, MS, MC, Streaming, Point>{
                        u, f, point, static_cast<int>(l.j_begin), static_cast<int>(l.j_end),
                        static_cast<int>(l.s_begin), static_cast<int>(l.s_end),
                        static_cast<int>(l.c_begin), static_cast<int>(l.c_end), p.blocks_per_item,
                        static_cast<int>(l.slow_items_per_part),
                        static_cast<int>(l.y_blocks_per_part), Divisor(l.slow_items_per_part),
                        p.zero_row_ends});
              }
            });
          });
        });
      });
    }
  });
}

template <class T, class KokkosLayout>
void launch_blocked(const LaplacianPlan& plan, const StencilCoeffs<T>& a,
                    const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  launch_blocked<T, KokkosLayout>("kstencil::laplacian::blocked", plan,
                                  LaplacianPoint<T, KokkosLayout>{a}, u, f);
}

}  // namespace laplacian_kernels
}  // namespace kstencil
