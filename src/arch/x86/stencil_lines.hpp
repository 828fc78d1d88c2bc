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
#include <limits>
#include <type_traits>

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
// in [0, S) and the `rows` rows of q in [r * sy, r * sy + n), and with `ends` also the points
// either side of each row (0, or the input's value, summed in no norm): lines along the contiguous
// axis (stride 1), planes ss apart along the slowest axis, rows sy apart. Several rows only where
// the ends lie between them (ends not none, sy = n + 2): the rows and their ends then run as one
// span, so that only the span's first and last cache lines are partial. Lines run along z with the
// slowest axis x for LayoutRight fields, along x with z slowest for LayoutLeft. Point::of gets each
// point's offset from c plus `origin` (the offset of c from the row the point was made for). With
// Norm it returns the sum of (out - c)^2 over the points (each vector's S planes squared and summed
// in T, as the GPUs' float sums are: float's conversions to double cost more than the sums; the
// rest in double; else 0).
// The vectors start on plane 0's cache lines; another plane's values, where its lines start
// elsewhere, are realigned in registers (two vectors' window) before they are streamed, so every
// plane writes each whole line of its span with non-temporal stores and the few points of its
// first and last partial line with plain (masked) stores. The vectors before the first and after
// the last point read up to one vector beyond the span, within the rows beside it (the update box
// lies inside boundary or halo points). The caller fences the non-temporal stores. Each stream is
// prefetched: those from memory `prefetch` bytes ahead into the cache Into names; prefetch 0
// prefetches none, not even those from the L2 (kernel.prefetch, kernel.prefetch_into).
template <template <class> class Vec, int S, class KokkosLayout, bool Norm, PrefetchInto Into,
          class T, class Point>
inline double stencil_lines_simd(const T* KOKKOS_RESTRICT c, T* KOKKOS_RESTRICT out, const int n,
                                 const int rows, const std::ptrdiff_t ss, const std::ptrdiff_t sy,
                                 const Point& row_point, const std::ptrdiff_t origin,
                                 const RowEnds ends, const int prefetch) {
  using Z = Vec<T>;
  using V = typename Z::V;
  using Lanes = typename Z::Lanes;
  constexpr int W = Z::width;
  constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
  constexpr int line_vectors = per_line / W;  // AVX2: 2
  constexpr bool z_lines = x_is_slowest<KokkosLayout>();
  // A local copy: read through a reference, g++ reloads the point's coefficients for every vector
  // because the non-temporal stores might alias them.
  const Point point = row_point;
  // The span [lo, hi) of positions q: the rows with their ends, `period` = n + 2 apart, or one row.
  const bool with_ends = ends != RowEnds::none;
  const int period = n + 2;
  const std::ptrdiff_t lo = with_ends ? -1 : 0;
  const std::ptrdiff_t hi = with_ends ? std::ptrdiff_t(rows) * period - 1 : n;
  const auto is_end = [&](const std::ptrdiff_t q) {
    const std::ptrdiff_t k = (q + 1) % period;
    return with_ends && (k == 0 || k == period - 1);
  };
  double squares_one_by_one = 0;
  const auto store_point = [&](const int p, const std::ptrdiff_t q) {
    const T* cp = c + p * ss;
    if (is_end(q)) {
      out[p * ss + q] = ends == RowEnds::zero ? T(0) : cp[q];
      return;
    }
    const T slow_pair = cp[q - ss] + cp[q + ss], line_pair = cp[q - 1] + cp[q + 1];
    const T value = point.template of<ScalarOps<T>>(
        cp[q], z_lines ? slow_pair : line_pair, cp[q - sy] + cp[q + sy],
        z_lines ? line_pair : slow_pair, origin + p * ss + q);
    if (Norm) {
      const double change = static_cast<double>(value - cp[q]);
      squares_one_by_one += change * change;
    }
    out[p * ss + q] = value;
  };
  // The vectors run over plane 0's whole cache lines [first, last); the points before and after
  // them one by one.
  const std::ptrdiff_t first =
      lo + points_before_line_boundary(out + lo, static_cast<int>(hi - lo));
  const std::ptrdiff_t last = first + (hi - first) / per_line * per_line;
  for (std::ptrdiff_t q = lo; q < first; ++q)
    for (int p = 0; p < S; ++p) store_point(p, q);
  typename Z::Squares squares;
  if (first < last) {
    // Plane p's lines start `shift` points into plane 0's: from a computed line on, its stored
    // line takes the previous computed line's last per_line - shift values and this line's first.
    int shift[S],
        from_vector[S];  // where plane p's stored line starts among the two lines' vectors
    typename Z::Window window[S];
    for (int p = 0; p < S; ++p) {
      shift[p] = static_cast<int>(
          (reinterpret_cast<std::uintptr_t>(out + p * ss + first) / sizeof(T)) % per_line);
      from_vector[p] = (per_line - shift[p]) / W;
      // A line of one vector (AVX-512): its window over the pair (previous line, this line) for any
      // shift, per_line - 0 taking this line whole.
      window[p] = Z::window(line_vectors == 1 ? per_line - shift[p] : (per_line - shift[p]) % W);
    }
    // The lanes of the first `count` points of a line's vector v.
    const auto lanes_before = [](const int count, const int v) {
      const int k = count - v * W;
      return static_cast<Lanes>(k <= 0 ? 0 : k >= W ? (1ull << W) - 1 : (1ull << k) - 1);
    };
    // The lines, with the planes that start elsewhere realigned (Realign) or all streamed as
    // computed: only the former keeps the previous line's vectors.
    const auto lines = [&](const auto realign) {
      constexpr bool Realign = decltype(realign)::value;
      V before[S], at[S];  // the vectors at q - W and q of each plane's line
      for (int p = 0; p < S; ++p) {
        before[p] = Z::load(c + p * ss + first - W);
        at[p] = Z::load(c + p * ss + first);
      }
      V previous[line_vectors][S];  // the line computed before (none before the first)
      for (int v = 0; v < line_vectors; ++v)
        for (int p = 0; p < S; ++p) previous[v][p] = Z::splat(T(0));
      // The next pair of row ends not yet passed: a row's last point, the next row's first after it
      // (at -2 mod period; none without ends).
      std::ptrdiff_t pair = std::numeric_limits<std::ptrdiff_t>::max();
      if (with_ends) {
        std::ptrdiff_t ahead = (-1 - first) % period;
        pair = first - 1 + (ahead < 0 ? ahead + period : ahead);
      }
      for (std::ptrdiff_t q = first; q < last;) {
        const std::ptrdiff_t line_q = q;
        V values[line_vectors][S];
        // The line's row-end lanes, one bit a point; a pair across the line's end stays for the
        // next line.
        unsigned line_ends = 0;
        while (pair < line_q + per_line) {
          const int lane = static_cast<int>(pair - line_q);
          if (lane >= 0) line_ends |= 1u << lane;
          if (lane + 1 >= per_line) break;
          line_ends |= 1u << (lane + 1);
          pair += period;
        }
        for (int v = 0; v < line_vectors; ++v, q += W) {
          // Each stream the row reads is prefetched: those that come from memory (planes 1 .. S - 1
          // one row on, plane S at this row) `prefetch` bytes ahead into Into, those that a sweep
          // through the planes has already brought into the L2 (plane -1 at this row, plane 0 one
          // row on) into the L1 512 B ahead.
          if (prefetch > 0 && v == 0) {
            for (int p = 1; p < S; ++p) prefetch_from_memory<Into>(c + p * ss + sy + q, prefetch);
            prefetch_from_memory<Into>(c + S * ss + q, prefetch);
            prefetch_ahead(c - ss + q, cache_read_ahead_bytes);
            prefetch_ahead(c + sy + q, cache_read_ahead_bytes);
          }
          const auto ends_here = static_cast<Lanes>(line_ends >> (v * W) & ((1ull << W) - 1));
          V column[S + 2];  // the line's vectors at q in planes -1 .. S
          column[0] = Z::load(c - ss + q);
          for (int p = 0; p < S; ++p) column[p + 1] = at[p];
          column[S + 1] = Z::load(c + S * ss + q);
          V squared_changes;  // Norm: the planes' squared changes at q, summed in T
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
            if (Norm)
              squared_changes = p == 0 ? Z::squared_change(value, at[p])
                                       : Z::add(squared_changes, Z::squared_change(value, at[p]));
            values[v][p] = ends == RowEnds::zero ? Z::zero_lanes(value, ends_here)
                                                 : Z::lanes_from(value, ends_here, at[p]);
            before[p] = at[p];
            at[p] = after;
          }
          if (Norm) Z::add_squares(squares, squared_changes, ends_here);
        }
        // The stores after all the line's loads (the fields start at the same offset within a 4
        // KiB page, so the next plane's row loads would share a store's low 12 address bits and
        // wait for it: docs/PERFORMANCE.md, host section), each plane's back to back so that they
        // fill their write-combining buffer at once.
        if (!Realign || line_q == first) {
          for (int p = 0; p < S; ++p) {
            T* const line = out + p * ss + line_q;
            if (!Realign || shift[p] == 0)
              for (int v = 0; v < line_vectors; ++v) Z::stream(line + v * W, values[v][p]);
            else
              for (int v = 0; v < line_vectors; ++v)
                Z::store_lanes(line + v * W, values[v][p], lanes_before(per_line - shift[p], v));
          }
        } else if constexpr (line_vectors == 1) {
          // AVX-512: every plane through its window, the shift 0 plane's taking this line.
          for (int p = 0; p < S; ++p)
            Z::stream(out + p * ss + line_q - shift[p],
                      Z::take(window[p], previous[0][p], values[0][p]));
        } else {
          // AVX2: a plane's stored line starts in the previous line's first vector (from_vector
          // 0) or second (1), or is this line (shift 0).
          static_assert(line_vectors == 2, "lines of one or two vectors");
          for (int p = 0; p < S; ++p) {
            T* const to = out + p * ss + line_q - shift[p];
            const V p0 = previous[0][p], p1 = previous[1][p], v0 = values[0][p], v1 = values[1][p];
            if (from_vector[p] == 0) {
              Z::stream(to, Z::take(window[p], p0, p1));
              Z::stream(to + W, Z::take(window[p], p1, v0));
            } else if (from_vector[p] == 1) {
              Z::stream(to, Z::take(window[p], p1, v0));
              Z::stream(to + W, Z::take(window[p], v0, v1));
            } else {
              Z::stream(to, v0);
              Z::stream(to + W, v1);
            }
          }
        }
        if constexpr (Realign)
          for (int v = 0; v < line_vectors; ++v)
            for (int p = 0; p < S; ++p) previous[v][p] = values[v][p];
      }
      // The realigned planes' points after their last whole line.
      if constexpr (Realign)
        for (int p = 0; p < S; ++p)
          if (shift[p] != 0)
            for (int v = 0; v < line_vectors; ++v)
              Z::store_lanes(out + p * ss + last - per_line + v * W, previous[v][p],
                             static_cast<Lanes>(~lanes_before(per_line - shift[p], v) &
                                                lanes_before(per_line, v)));
    };
    bool aligned = true;
    for (int p = 0; p < S; ++p) aligned = aligned && shift[p] == 0;
    if (aligned)
      lines(std::false_type{});
    else
      lines(std::true_type{});
  }
  for (std::ptrdiff_t q = last; q < hi; ++q)
    for (int p = 0; p < S; ++p) store_point(p, q);
  return Norm ? squares.total() + squares_one_by_one : 0.0;
}

}  // namespace x86
}  // namespace kstencil
