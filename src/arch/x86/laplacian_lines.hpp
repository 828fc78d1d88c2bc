#pragma once
// The line kernel's rows on hosts with AVX-512: a row of several planes at once, written whole
// cache lines at a time through non-temporal stores. Each vector of the centre line is loaded once
// and serves as its own plane's centre, the neighbouring planes' slowest-axis neighbour and
// (shifted by one lane against the vectors before and after it) its contiguous-axis neighbours, so
// a row of S planes loads S + 2 plane lines and 2 S y-neighbour lines per vector
// (docs/PERFORMANCE.md, host section). Only arch/streams.hpp includes this file.
#include <immintrin.h>

#include <cstddef>

#include "arch/x86/streams.hpp"
#include "laplacian/stencil.hpp"

namespace kstencil {
namespace x86 {

template <class T>
struct Zmm;

// How far ahead stencil_lines_avx512 prefetches the lines it reads again from the L2 (those from
// memory: its `prefetch` argument; every stream prefetched: docs/PERFORMANCE.md, host section).
inline constexpr int cache_read_ahead_bytes = 512;

template <>
struct Zmm<double> {
  using V = __m512d;
  static constexpr int width = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V splat(double v) { return _mm512_set1_pd(v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static void stream(double* p, V v) { _mm512_stream_pd(p, v); }
  using Lanes = __mmask8;
  static constexpr Lanes first_lane = 0x01, last_lane = 0x80;
  static V zero_lanes(V v, Lanes lanes) {
    return _mm512_maskz_mov_pd(static_cast<Lanes>(~lanes), v);
  }
  // The elements one before (one after) those of `at`, given the vectors before and after it. The
  // masked form with every lane selected is the same instruction; g++ 12 warns that the unmasked
  // intrinsic's internal undefined operand may be used uninitialized.
  static V shifted_back(V before, V at) {
    const __m512i a = _mm512_castpd_si512(at);
    return _mm512_castsi512_pd(
        _mm512_mask_alignr_epi64(a, 0xff, a, _mm512_castpd_si512(before), 7));
  }
  static V shifted_on(V at, V after) {
    const __m512i a = _mm512_castpd_si512(at);
    return _mm512_castsi512_pd(_mm512_mask_alignr_epi64(a, 0xff, _mm512_castpd_si512(after), a, 1));
  }
};

template <>
struct Zmm<float> {
  using V = __m512;
  static constexpr int width = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V splat(float v) { return _mm512_set1_ps(v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static void stream(float* p, V v) { _mm512_stream_ps(p, v); }
  using Lanes = __mmask16;
  static constexpr Lanes first_lane = 0x0001, last_lane = 0x8000;
  static V zero_lanes(V v, Lanes lanes) {
    return _mm512_maskz_mov_ps(static_cast<Lanes>(~lanes), v);
  }
  static V shifted_back(V before, V at) {
    const __m512i a = _mm512_castps_si512(at);
    return _mm512_castsi512_ps(
        _mm512_mask_alignr_epi32(a, 0xffff, a, _mm512_castps_si512(before), 15));
  }
  static V shifted_on(V at, V after) {
    const __m512i a = _mm512_castps_si512(at);
    return _mm512_castsi512_ps(
        _mm512_mask_alignr_epi32(a, 0xffff, _mm512_castps_si512(after), a, 1));
  }
};

// out[p * ss + q] = the stencil at c[p * ss + q] for the planes p in [0, S) and q in [0, n), and
// with zero_ends also out[p * ss - 1] = out[p * ss + n] = 0: lines along the contiguous axis
// (stride 1), planes ss apart along the slowest axis, rows sy apart. Lines run along z with the
// slowest axis x for LayoutRight fields, along x with z slowest for LayoutLeft; the sum runs in
// stencil7's order, so the results are bitwise those of the other kernels. Every plane's output
// must lie at the same offset from a cache-line boundary (ss * sizeof(T) a multiple of 64 bytes,
// or S = 1). Where the zeroed ends complete the row's first and last cache lines
// (line_with_ends_fills_cache_lines), every line is written whole with non-temporal stores;
// otherwise the points before the first and after the last whole line are stored plainly one by
// one (and wait for their lines to be read).
// The vectors before the first and after the last point read up to one vector beyond the line and
// its ends, within the rows beside it (the update box lies inside boundary or halo points). The
// caller fences the non-temporal stores. Each stream is prefetched: those from memory `prefetch`
// bytes ahead; prefetch 0 prefetches none, not even those from the L2 (kernel.prefetch).
template <int S, class KokkosLayout, class T>
inline void stencil_lines_avx512(const T* KOKKOS_RESTRICT c, T* KOKKOS_RESTRICT out, const int n,
                                 const std::ptrdiff_t ss, const std::ptrdiff_t sy,
                                 const StencilCoeffs<T>& a, const bool zero_ends,
                                 const int prefetch) {
  using Z = Zmm<T>;
  using V = typename Z::V;
  constexpr int W = Z::width;
  constexpr bool z_lines = x_is_slowest<KokkosLayout>();
  const auto point = [=](const T* cp, const int q) {
    return stencil7_by_role<KokkosLayout>(cp[q], cp[q - ss], cp[q + ss], cp[q - sy], cp[q + sy],
                                          cp[q - 1], cp[q + 1], a);
  };
  // With the zeroed ends filling whole cache lines the vectors run from the point before the line
  // to the point after it, the ends' lanes set to 0; otherwise over the line's whole cache lines,
  // the points before and after them one by one.
  const bool whole_lines = zero_ends && line_with_ends_fills_cache_lines(out, n);
  const int head = whole_lines ? -1 : points_before_line_boundary(out, n);
  const int end = whole_lines ? n + 1 : n;
  int q = whole_lines ? -1 : 0;
  for (; q < head; ++q)
    for (int p = 0; p < S; ++p) out[p * ss + q] = point(c + p * ss, q);
  if (q + W <= end) {
    // Where the first and the last vector's end lanes are zeroed (never, without whole lines).
    const int first_zeroed = whole_lines ? -1 : end, last_zeroed = whole_lines ? end - W : end;
    const V along_x = Z::splat(a.x), along_y = Z::splat(a.y), along_z = Z::splat(a.z),
            centre = Z::splat(a.center);
    V before[S], at[S];  // the vectors at q - W and q of each plane's line
    for (int p = 0; p < S; ++p) {
      before[p] = Z::load(c + p * ss + q - W);
      at[p] = Z::load(c + p * ss + q);
    }
    for (; q + W <= end; q += W) {
      // Each stream the row reads is prefetched into the L1: those that come from memory (planes
      // 1 .. S - 1 one row on, plane S at this row) `prefetch` bytes ahead, those that a sweep
      // through the planes has already brought into the L2 (plane -1 at this row, plane 0 one row
      // on) 512 B ahead.
      if (prefetch > 0) {
        for (int p = 1; p < S; ++p) prefetch_ahead(c + p * ss + sy + q, prefetch);
        prefetch_ahead(c + S * ss + q, prefetch);
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
        const V line_pair = Z::add(Z::shifted_back(before[p], at[p]), Z::shifted_on(at[p], after));
        const V slow_pair = Z::add(column[p], column[p + 2]);
        const V y_pair = Z::add(Z::load(cp + q - sy), Z::load(cp + q + sy));
        // The slowest axis is x for z lines, z for x lines.
        const V x_pair = z_lines ? slow_pair : line_pair, z_pair = z_lines ? line_pair : slow_pair;
        V sum = Z::mul(at[p], centre);
        sum = Z::add(sum, Z::mul(x_pair, along_x));
        sum = Z::add(sum, Z::mul(y_pair, along_y));
        sum = Z::add(sum, Z::mul(z_pair, along_z));
        Z::stream(out + p * ss + q, Z::zero_lanes(sum, zeroed));
        before[p] = at[p];
        at[p] = after;
      }
    }
  }
  for (; q < n; ++q)
    for (int p = 0; p < S; ++p) out[p * ss + q] = point(c + p * ss, q);
  if (zero_ends && !whole_lines)
    for (int p = 0; p < S; ++p) out[p * ss - 1] = out[p * ss + n] = T(0);
}

}  // namespace x86
}  // namespace kstencil
