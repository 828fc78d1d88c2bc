#pragma once
// line: m consecutive rows (y) of m_slow consecutive planes per work item, each row a whole line of
// the contiguous axis through raw restrict pointers so that host compilers vectorise it (Kokkos'
// host MDRange does not). A 2D policy over (blocks of m_slow planes, blocks of m rows); within a
// tile a thread sweeps the tile's rows of one block of planes, then of the next. The rows go
// through stencil_lines (arch/streams.hpp): non-temporal whole cache lines on AVX hosts, fenced
// once per work item, several planes at once with AVX2 or AVX-512; plain loops elsewhere.
#include <cstddef>

#include "arch/streams.hpp"
#include "core/field.hpp"
#include "laplacian/kernels/common.hpp"
#include "laplacian/plan.hpp"

namespace kstencil {
namespace laplacian_kernels {

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
  Prefetch prefetch;         // the rows' prefetches of their streams from memory (bytes 0: none)

  KOKKOS_INLINE_FUNCTION void operator()(const int plane_block, const int block) const {
    constexpr bool z_lines = x_is_slowest<KokkosLayout>();
    const std::ptrdiff_t sx = u.stride(0), sy = u.stride(1), sz = u.stride(2);
    const int first_plane = slow_begin + plane_block * Planes;
    const int planes = first_plane + Planes <= slow_end ? Planes : slow_end - first_plane;
    const int j_first = j_begin + block * rows;
    const int j_last = j_first + rows < j_end ? j_first + rows : j_end;  // exclusive
    const StencilPoint<T> point{a};
    const std::ptrdiff_t start =
        (z_lines ? first_plane * sx + begin * sz : begin * sx + first_plane * sz) + j_first * sy;
    stencil_lines<Streaming, Planes, KokkosLayout>(
        u.data() + start, f.data() + start, end - begin, j_last - j_first, planes,
        z_lines ? sx : sz, sy, point, zero_row_ends ? RowEnds::zero : RowEnds::none, prefetch);
    fence_streamed_stores<Streaming>();
  }
};

template <class T, class KokkosLayout>
void launch_line(const LaplacianPlan& plan, const StencilCoeffs<T>& a,
                 const Field<const T, KokkosLayout>& u, const Field<T, KokkosLayout>& f) {
  using Policy =
      Kokkos::MDRangePolicy<Kokkos::DefaultExecutionSpace,
                            Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                            Kokkos::IndexType<int>>;
  const LaplacianKernelParams& p = plan.params;
  const LaplacianLaunch& l = *plan.launch;
  const Policy policy({0, 0}, {static_cast<int>(l.upper[0]), static_cast<int>(l.upper[1])},
                      {static_cast<int>(l.tile[0]), static_cast<int>(l.tile[1])});
  dispatch_store_kind(p.streaming_stores, [&](auto streaming) {
    dispatch_slow_points_per_item(p.m_slow, [&](auto planes) {
      Kokkos::parallel_for(
          "kstencil::laplacian::line", policy,
          LineStencil<T, KokkosLayout, decltype(streaming)::value, decltype(planes)::value>{
              u, f, a, static_cast<int>(l.c_begin), static_cast<int>(l.c_end),
              static_cast<int>(l.j_begin), static_cast<int>(l.j_end), static_cast<int>(l.s_begin),
              static_cast<int>(l.s_end), p.m, p.zero_row_ends, p.prefetch});
    });
  });
}

}  // namespace laplacian_kernels
}  // namespace kstencil
