#pragma once
// The line kernels' rows on x86 hosts with AVX2 or AVX-512: a row of several planes at once,
// written whole cache lines at a time through non-temporal stores. Each vector of the centre line
// is loaded once and serves as its own plane's centre, the neighbouring planes' slowest-axis
// neighbour and (shifted by one lane against the vectors before and after it) its contiguous-axis
// neighbours, so a row of S planes loads S + 2 plane lines and 2 S y-neighbour lines per vector
// (docs/PERFORMANCE.md, host section). The point's formula comes from the caller (the Laplacian's,
// Jacobi's), written once for values and vectors; the vectors' operations come from Vec
// (arch/x86/ymm.hpp, zmm.hpp). Only arch/streams.hpp includes this file (the tests call both
// widths through it).
#include <cstddef>

#include "arch/x86/streams.hpp"
#include "arch/x86/ymm.hpp"
#if defined(__AVX512F__)
#include "arch/x86/zmm.hpp"
#endif
#include "core/scalar_ops.hpp"
#include "core/stores.hpp"
#include "laplacian/stencil.hpp"

namespace kstencil {
namespace x86 {

// How far ahead stencil_lines_simd prefetches the lines it reads again from the L2 (those from
// memory: its `prefetch` argument; every stream prefetched: docs/PERFORMANCE.md, host section).
inline constexpr int cache_read_ahead_bytes = 512;

// out[p * ss + q] = the point at c[p * ss + q] (Point::of from its neighbours' pair sums, on values
// and on vectors, in one fixed order: the same bits as the solver's other kernels) for the planes p
// in [0, S) and q in [0, n), and at the ends out[p * ss - 1] and out[p * ss + n] as `ends` says:
// lines along the contiguous axis (stride 1), planes ss apart along the slowest axis, rows sy
// apart. Lines run along z with the slowest axis x for LayoutRight fields, along x with z slowest
// for LayoutLeft. Point::of gets each point's offset from c plus `origin` (the offset of c from the
// row the point was made for). With Norm it returns the sum of (out - c)^2 over those points in
// double (else 0).
// Every plane's output must lie at the same offset from a cache-line boundary (ss * sizeof(T) a
// multiple of 64 bytes, or S = 1). Where the ends complete the row's first and last cache lines
// (line_with_ends_fills_cache_lines), every line is written whole with non-temporal stores;
// otherwise the points before the first and after the last whole line are stored plainly one by
// one (and wait for their lines to be read).
// The vectors before the first and after the last point read up to one vector beyond the line and
// its ends, within the rows beside it (the update box lies inside boundary or halo points). The
// caller fences the non-temporal stores. Each stream is prefetched: those from memory `prefetch`
// bytes ahead into the cache Into names; prefetch 0 prefetches none, not even those from the L2
// (kernel.prefetch, kernel.prefetch_into).
template <template <class> class Vec, int S, class KokkosLayout, bool Norm, PrefetchInto Into,
          class T, class Point>
inline double stencil_lines_simd(const T* KOKKOS_RESTRICT c, T* KOKKOS_RESTRICT out, const int n,
                                 const std::ptrdiff_t ss, const std::ptrdiff_t sy,
                                 const Point& row_point, const std::ptrdiff_t origin,
                                 const RowEnds ends, const int prefetch) {
  using Z = Vec<T>;
  using V = typename Z::V;
  constexpr int W = Z::width;
  constexpr bool z_lines = x_is_slowest<KokkosLayout>();
  // A local copy: read through a reference, g++ reloads the point's coefficients for every vector
  // because the non-temporal stores might alias them.
  const Point point = row_point;
  double squares_one_by_one = 0;
  const auto store_point = [&](const int p, const int q) {
    const T* cp = c + p * ss;
    const T slow_pair = cp[q - ss] + cp[q + ss], line_pair = cp[q - 1] + cp[q + 1];
    const T value = point.template of<ScalarOps<T>>(
        cp[q], z_lines ? slow_pair : line_pair, cp[q - sy] + cp[q + sy],
        z_lines ? line_pair : slow_pair, origin + p * ss + q);
    if (Norm) {
      const double change = static_cast<double>(value) - static_cast<double>(cp[q]);
      squares_one_by_one += change * change;
    }
    out[p * ss + q] = value;
  };
  typename Z::Squares squares;
  // With the ends filling whole cache lines the vectors run from the point before the line to the
  // point after it, the ends' lanes set to 0 or the input's values; otherwise over the line's whole
  // cache lines, the points before and after them one by one.
  const bool whole_lines = ends != RowEnds::none && line_with_ends_fills_cache_lines(out, n);
  const int head = whole_lines ? -1 : points_before_line_boundary(out, n);
  const int end = whole_lines ? n + 1 : n;
  int q = whole_lines ? -1 : 0;
  for (; q < head; ++q)
    for (int p = 0; p < S; ++p) store_point(p, q);
  if (q + W <= end) {
    // Where the first and the last vector's end lanes are set (never, without whole lines).
    const int first_zeroed = whole_lines ? -1 : end, last_zeroed = whole_lines ? end - W : end;
    V before[S], at[S];  // the vectors at q - W and q of each plane's line
    for (int p = 0; p < S; ++p) {
      before[p] = Z::load(c + p * ss + q - W);
      at[p] = Z::load(c + p * ss + q);
    }
    // Vectors a cache line holds (AVX2: 2). A line's vectors are computed together and each
    // plane's stored back to back, so that its non-temporal stores fill their write-combining
    // buffer at once; the prefetches go with the line's first vector.
    constexpr int line_vectors = cache_line_bytes / (W * static_cast<int>(sizeof(T)));
    while (q + W <= end) {
      const int line_q = q;
      V values[line_vectors][S];
      int done = 0;
      for (; done < line_vectors && q + W <= end; ++done, q += W) {
        // Each stream the row reads is prefetched: those that come from memory (planes 1 .. S - 1
        // one row on, plane S at this row) `prefetch` bytes ahead into Into, those that a sweep
        // through the planes has already brought into the L2 (plane -1 at this row, plane 0 one
        // row on) into the L1 512 B ahead.
        if (prefetch > 0 && done == 0) {
          for (int p = 1; p < S; ++p) prefetch_from_memory<Into>(c + p * ss + sy + q, prefetch);
          prefetch_from_memory<Into>(c + S * ss + q, prefetch);
          prefetch_ahead(c - ss + q, cache_read_ahead_bytes);
          prefetch_ahead(c + sy + q, cache_read_ahead_bytes);
        }
        const auto zeroed = static_cast<typename Z::Lanes>((q == first_zeroed ? Z::first_lane : 0) |
                                                           (q == last_zeroed ? Z::last_lane : 0));
        V column[S + 2];  // the line's vectors at q in planes -1 .. S
        column[0] = Z::load(c - ss + q);
        for (int p = 0; p < S; ++p) column[p + 1] = at[p];
        column[S + 1] = Z::load(c + S * ss + q);
        for (int p = 0; p < S; ++p) {
          const T* cp = c + p * ss;
          const V after = Z::load(cp + q + W);
          const V line_pair =
              Z::add(Z::shifted_back(before[p], at[p]), Z::shifted_on(at[p], after));
          const V slow_pair = Z::add(column[p], column[p + 2]);
          const V y_pair = Z::add(Z::load(cp + q - sy), Z::load(cp + q + sy));
          // The slowest axis is x for z lines, z for x lines.
          const V value =
              point.template of<Z>(at[p], z_lines ? slow_pair : line_pair, y_pair,
                                   z_lines ? line_pair : slow_pair, origin + p * ss + q);
          if (Norm) Z::add_squared_changes(squares, value, at[p], zeroed);
          values[done][p] = ends == RowEnds::zero ? Z::zero_lanes(value, zeroed)
                                                  : Z::lanes_from(value, zeroed, at[p]);
          before[p] = at[p];
          at[p] = after;
        }
      }
      // The stores after all the line's loads: the fields start at the same offset within a 4
      // KiB page, so the next plane's row loads would share a store's low 12 address bits and
      // wait for it (docs/PERFORMANCE.md, host section).
      for (int p = 0; p < S; ++p)
        for (int v = 0; v < done; ++v) Z::stream(out + p * ss + line_q + v * W, values[v][p]);
    }
  }
  for (; q < n; ++q)
    for (int p = 0; p < S; ++p) store_point(p, q);
  if (ends == RowEnds::zero && !whole_lines)
    for (int p = 0; p < S; ++p) out[p * ss - 1] = out[p * ss + n] = T(0);
  return Norm ? squares.total() + squares_one_by_one : 0.0;
}

}  // namespace x86
}  // namespace kstencil
