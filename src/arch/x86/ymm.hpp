#pragma once
// AVX2 vectors (4 doubles, 8 floats) with the operations of arch/x86/zmm.hpp's AVX-512 ones, for
// the x86 hosts without AVX-512 (AMD before Zen 4, most Intel client cores). AVX2 has no mask
// registers: the row ends' lanes are blends with masks made from the lanes' bits. Only
// arch/x86/stencil_lines.hpp includes this file.
#include <immintrin.h>

namespace kstencil {
namespace x86 {

// Partial sums of squares in double: two vectors, two independent chains of additions (float's
// two halves; double uses `low`).
struct YmmSquares {
  __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();
  double total() const {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, _mm256_add_pd(low, high));
    double sum = 0;
    for (const double lane : lanes) sum += lane;
    return sum;
  }
};

template <class T>
struct Ymm;

template <>
struct Ymm<double> {
  using V = __m256d;
  using Squares = YmmSquares;
  static constexpr int width = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V splat(double v) { return _mm256_set1_pd(v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static void stream(double* p, V v) { _mm256_stream_pd(p, v); }
  using Lanes = int;  // one bit a lane, the first lane lowest
  static V mask(Lanes lanes) {
    const __m256i bit = _mm256_set_epi64x(8, 4, 2, 1);
    return _mm256_castsi256_pd(
        _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(lanes), bit), bit));
  }
  static void store_lanes(double* p, V v, Lanes lanes) {
    _mm256_maskstore_pd(p, _mm256_castpd_si256(mask(lanes)), v);
  }
  // Elements shift .. shift + 3 of a followed by b (shift in [0, 4)): each permuted as eight
  // 32-bit halves, then blended.
  struct Window {
    __m256i index;
    V from_b;
  };
  static Window window(const int shift) {
    alignas(32) int index[8];
    for (int i = 0; i < 8; ++i) index[i] = 2 * ((i / 2 + shift) & 3) + (i & 1);
    return {_mm256_load_si256(reinterpret_cast<const __m256i*>(index)),
            mask(~((1 << (width - shift)) - 1) & 0xf)};
  }
  static V take(const Window& w, V a, V b) {
    return _mm256_blendv_pd(
        _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(a), w.index)),
        _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(b), w.index)), w.from_b);
  }
  static V zero_lanes(V v, Lanes lanes) {
    return lanes == 0 ? v : _mm256_blendv_pd(v, _mm256_setzero_pd(), mask(lanes));
  }
  static V lanes_from(V v, Lanes lanes, V from) {
    return lanes == 0 ? v : _mm256_blendv_pd(v, from, mask(lanes));
  }
  // (value - from)^2 lane by lane.
  static V squared_change(V value, V from) {
    const V change = _mm256_sub_pd(value, from);
    return _mm256_mul_pd(change, change);
  }
  // squares += sums lane by lane; `skipped` lanes add nothing.
  static void add_squares(Squares& squares, V sums, Lanes skipped) {
    squares.low = _mm256_add_pd(squares.low, zero_lanes(sums, skipped));
  }
  // The elements one before (one after) those of `at`, given the vectors before and after it:
  // the middle two elements across the vectors' 128-bit halves, then one from each side.
  static V shifted_back(V before, V at) {
    const V middle = _mm256_permute2f128_pd(before, at, 0x21);  // before 2, 3, at 0, 1
    return _mm256_shuffle_pd(middle, at, 0x5);                  // before 3, at 0, 1, 2
  }
  static V shifted_on(V at, V after) {
    const V middle = _mm256_permute2f128_pd(at, after, 0x21);  // at 2, 3, after 0, 1
    return _mm256_shuffle_pd(at, middle, 0x5);                 // at 1, 2, 3, after 0
  }
};

template <>
struct Ymm<float> {
  using V = __m256;
  using Squares = YmmSquares;
  static constexpr int width = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V splat(float v) { return _mm256_set1_ps(v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static void stream(float* p, V v) { _mm256_stream_ps(p, v); }
  using Lanes = int;  // one bit a lane, the first lane lowest
  static V mask(Lanes lanes) {
    const __m256i bit = _mm256_set_epi32(128, 64, 32, 16, 8, 4, 2, 1);
    return _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(lanes), bit), bit));
  }
  static void store_lanes(float* p, V v, Lanes lanes) {
    _mm256_maskstore_ps(p, _mm256_castps_si256(mask(lanes)), v);
  }
  // Elements shift .. shift + 7 of a followed by b (shift in [0, 8)): each permuted, then blended.
  struct Window {
    __m256i index;
    V from_b;
  };
  static Window window(const int shift) {
    const __m256i lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    return {
        _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(shift)), _mm256_set1_epi32(7)),
        mask(~((1 << (width - shift)) - 1) & 0xff)};
  }
  static V take(const Window& w, V a, V b) {
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, w.index),
                            _mm256_permutevar8x32_ps(b, w.index), w.from_b);
  }
  static V zero_lanes(V v, Lanes lanes) {
    return lanes == 0 ? v : _mm256_blendv_ps(v, _mm256_setzero_ps(), mask(lanes));
  }
  static V lanes_from(V v, Lanes lanes, V from) {
    return lanes == 0 ? v : _mm256_blendv_ps(v, from, mask(lanes));
  }
  // (value - from)^2 lane by lane in float (the caller sums a few in float:
  // JacobiPlan::sum_points).
  static V squared_change(V value, V from) {
    const V change = _mm256_sub_ps(value, from);
    return _mm256_mul_ps(change, change);
  }
  // squares += sums lane by lane, their halves converted and summed in double; `skipped` lanes add
  // nothing.
  static void add_squares(Squares& squares, V sums, Lanes skipped) {
    const V kept = zero_lanes(sums, skipped);
    squares.low = _mm256_add_pd(squares.low, _mm256_cvtps_pd(_mm256_castps256_ps128(kept)));
    squares.high = _mm256_add_pd(squares.high, _mm256_cvtps_pd(_mm256_extractf128_ps(kept, 1)));
  }
  // The middle four elements across the 128-bit halves, then a byte shift within each half.
  static V shifted_back(V before, V at) {
    const V middle = _mm256_permute2f128_ps(before, at, 0x21);  // before 4..7, at 0..3
    return _mm256_castsi256_ps(
        _mm256_alignr_epi8(_mm256_castps_si256(at), _mm256_castps_si256(middle), 12));
  }
  static V shifted_on(V at, V after) {
    const V middle = _mm256_permute2f128_ps(at, after, 0x21);  // at 4..7, after 0..3
    return _mm256_castsi256_ps(
        _mm256_alignr_epi8(_mm256_castps_si256(middle), _mm256_castps_si256(at), 4));
  }
};

}  // namespace x86
}  // namespace kstencil
