#pragma once
// AVX-512 vectors (8 doubles, 16 floats) with the operations stencil_lines_simd's rows use: the
// arithmetic of ScalarOps, loads, non-temporal and masked stores, the row ends' lanes, the shifts
// by one element and the windows that realign a plane's values to its cache lines. Only
// arch/x86/stencil_lines.hpp includes this file.
#include <immintrin.h>

namespace kstencil {
namespace x86 {

// Partial sums of squares in double: two vectors, two independent chains of additions (float's
// two halves; double uses `low`).
struct ZmmSquares {
  __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();
  // Through memory: g++ 12 warns of _mm512_reduce_add_pd's internal undefined operand.
  double total() const {
    alignas(64) double lanes[8];
    _mm512_store_pd(lanes, _mm512_add_pd(low, high));
    double sum = 0;
    for (const double lane : lanes) sum += lane;
    return sum;
  }
};

template <class T>
struct Zmm;

template <>
struct Zmm<double> {
  using V = __m512d;
  using Squares = ZmmSquares;
  static constexpr int width = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V splat(double v) { return _mm512_set1_pd(v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static void stream(double* p, V v) { _mm512_stream_pd(p, v); }
  using Lanes = __mmask8;  // one bit a lane, the first lane lowest
  static void store_lanes(double* p, V v, Lanes lanes) { _mm512_mask_storeu_pd(p, lanes, v); }
  // Elements shift .. shift + 7 of a followed by b (shift in [0, 8]: 8 takes b).
  using Window = __m512i;
  static Window window(const int shift) {
    return _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(shift));
  }
  static V take(const Window& w, V a, V b) { return _mm512_permutex2var_pd(a, w, b); }
  static V zero_lanes(V v, Lanes lanes) {
    return _mm512_maskz_mov_pd(static_cast<Lanes>(~lanes), v);
  }
  static V lanes_from(V v, Lanes lanes, V from) { return _mm512_mask_mov_pd(v, lanes, from); }
  // (value - from)^2 lane by lane.
  static V squared_change(V value, V from) {
    const V change = _mm512_sub_pd(value, from);
    return _mm512_mul_pd(change, change);
  }
  // squares += sums lane by lane; `skipped` lanes add nothing.
  static void add_squares(Squares& squares, V sums, Lanes skipped) {
    squares.low = _mm512_add_pd(squares.low, zero_lanes(sums, skipped));
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
  using Squares = ZmmSquares;
  static constexpr int width = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V splat(float v) { return _mm512_set1_ps(v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static void stream(float* p, V v) { _mm512_stream_ps(p, v); }
  using Lanes = __mmask16;  // one bit a lane, the first lane lowest
  static void store_lanes(float* p, V v, Lanes lanes) { _mm512_mask_storeu_ps(p, lanes, v); }
  // Elements shift .. shift + 15 of a followed by b (shift in [0, 16]: 16 takes b).
  using Window = __m512i;
  static Window window(const int shift) {
    return _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi32(shift));
  }
  static V take(const Window& w, V a, V b) { return _mm512_permutex2var_ps(a, w, b); }
  static V zero_lanes(V v, Lanes lanes) {
    return _mm512_maskz_mov_ps(static_cast<Lanes>(~lanes), v);
  }
  static V lanes_from(V v, Lanes lanes, V from) { return _mm512_mask_mov_ps(v, lanes, from); }
  // (value - from)^2 lane by lane in float (the caller sums a few in float:
  // JacobiPlan::sum_points).
  static V squared_change(V value, V from) {
    const V change = _mm512_sub_ps(value, from);
    return _mm512_mul_ps(change, change);
  }
  // squares += sums lane by lane, their halves converted and summed in double; `skipped` lanes add
  // nothing.
  static void add_squares(Squares& squares, V sums, Lanes skipped) {
    const __m512d kept = _mm512_castps_pd(zero_lanes(sums, skipped));
    // Masked forms with every lane kept: g++ 12 warns that the plain intrinsics' internal
    // undefined operands may be used uninitialized.
    squares.low = _mm512_add_pd(
        squares.low,
        _mm512_maskz_cvtps_pd(0xff, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0x0f, kept, 0))));
    squares.high = _mm512_add_pd(
        squares.high,
        _mm512_maskz_cvtps_pd(0xff, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0x0f, kept, 1))));
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

}  // namespace x86
}  // namespace kstencil
