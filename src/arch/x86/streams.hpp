#pragma once
// x86 (AVX) non-temporal stores of whole 64-byte cache lines. A plain store first reads the line it
// writes (read for ownership), so a kernel that reads one field and writes another moves 24 bytes
// per point through DRAM with plain stores and 16 with these (docs/PERFORMANCE.md, host section).
// Only arch/streams.hpp includes this file.
#include <immintrin.h>

#include <cstdint>

#include "arch/prefetch.hpp"

namespace kstencil {
namespace x86 {

inline constexpr int cache_line_bytes = 64;

// Into the L1: the line `bytes` past p. Integer arithmetic: the address may lie past an array's
// end, which a prefetch ignores.
template <class T>
inline void prefetch_ahead(const T* p, const int bytes) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + bytes),
               _MM_HINT_T0);
}

// The line `bytes` past p into the L2 only.
template <class T>
inline void prefetch_ahead_into_l2(const T* p, const int bytes) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + bytes),
               _MM_HINT_T1);
}

// A stream read from memory at p: its line `bytes` ahead into the cache Into names (a template
// argument, so a row's loop holds no choice of cache).
template <PrefetchInto Into, class T>
inline void prefetch_from_memory(const T* p, const int bytes) {
  if constexpr (Into == PrefetchInto::l2) {
    prefetch_ahead_into_l2(p, bytes);
  } else {
    prefetch_ahead(p, bytes);
    if constexpr (Into == PrefetchInto::both) prefetch_ahead_into_l2(p, 2 * bytes);
  }
}

// One 64-byte line at `to` (aligned) from `from` (any alignment) through non-temporal stores.
inline void stream_cache_line(double* to, const double* from) {
  _mm256_stream_pd(to, _mm256_loadu_pd(from));
  _mm256_stream_pd(to + 4, _mm256_loadu_pd(from + 4));
}
inline void stream_cache_line(float* to, const float* from) {
  _mm256_stream_ps(to, _mm256_loadu_ps(from));
  _mm256_stream_ps(to + 8, _mm256_loadu_ps(from + 8));
}

// Points of a line before `out`'s first cache-line boundary, at most n.
template <class T>
inline int points_before_line_boundary(const T* out, const int n) {
  constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
  const int offset =
      static_cast<int>(reinterpret_cast<std::uintptr_t>(out) % cache_line_bytes) / sizeof(T);
  return offset == 0 ? 0 : per_line - offset < n ? per_line - offset : n;
}

// Whether the n points at `out` with one point either side of them fill two or more whole cache
// lines: then a line whose end points are stored too is written whole, without plain stores.
template <class T>
inline bool line_with_ends_fills_cache_lines(const T* out, const int n) {
  constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
  return reinterpret_cast<std::uintptr_t>(out - 1) % cache_line_bytes == 0 &&
         (n + 2) % per_line == 0 && n + 2 >= 2 * per_line;
}

// out[q] = value_at(q) for q in [0, n), and with zero_ends also out[-1] = out[n] = 0. The cache
// lines wholly inside the range are computed into a buffer of one line and streamed, the partial
// lines at both ends stored plainly (no point outside the range is written); where the zeroed
// ends complete the first and last lines, those are streamed whole too. Each line prefetches
// read_first + q `prefetch` bytes ahead into the cache Into names (the input read first, from
// memory rather than a cache; none for prefetch 0).
template <PrefetchInto Into, class T, class ValueAt>
inline void stream_line(T* out, const int n, const ValueAt& value_at, const T* read_first,
                        const bool zero_ends, const int prefetch) {
  constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
  alignas(cache_line_bytes) T line[per_line];
  const auto stream_line_at = [&](const int q) {
    if (prefetch > 0) prefetch_from_memory<Into>(read_first + q, prefetch);
    for (int p = 0; p < per_line; ++p) line[p] = value_at(q + p);
    stream_cache_line(out + q, line);
  };
  if (zero_ends && line_with_ends_fills_cache_lines(out, n)) {
    line[0] = T(0);
    for (int p = 1; p < per_line; ++p) line[p] = value_at(p - 1);
    stream_cache_line(out - 1, line);
    int q = per_line - 1;
    for (; q + per_line <= n; q += per_line) stream_line_at(q);
    for (int p = 0; p + 1 < per_line; ++p) line[p] = value_at(q + p);
    line[per_line - 1] = T(0);
    stream_cache_line(out + q, line);
    return;
  }
  const int head = points_before_line_boundary(out, n);
  int q = 0;
  for (; q < head; ++q) out[q] = value_at(q);
  for (; q + per_line <= n; q += per_line) stream_line_at(q);
  for (; q < n; ++q) out[q] = value_at(q);
  if (zero_ends) out[-1] = out[n] = T(0);
}

// out[q] = in[q] for q in [0, n): whole lines straight from the loads to the non-temporal stores
// (a copy has no arithmetic to hide a buffer's extra load and store behind).
template <class T>
inline void stream_copy(T* out, const T* in, const int n) {
  constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
  const int head = points_before_line_boundary(out, n);
  int q = 0;
  for (; q < head; ++q) out[q] = in[q];
  for (; q + per_line <= n; q += per_line) stream_cache_line(out + q, in + q);
  for (; q < n; ++q) out[q] = in[q];
}

// stream_copy with the whole lines in `Parts` equal parts copied a line from each part in turn:
// each part is a stream of its own for the core's prefetchers, and a core keeps more lines in
// flight over several streams than over one (docs/PERFORMANCE.md, host section).
template <int Parts, class T>
inline void stream_copy_in_parts(T* out, const T* in, const int n) {
  constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
  const int head = points_before_line_boundary(out, n);
  for (int q = 0; q < head; ++q) out[q] = in[q];
  const int part = (n - head) / (Parts * per_line) * per_line;
  T* const to = out + head;
  const T* const from = in + head;
  for (int q = 0; q < part; q += per_line)
    for (int p = 0; p < Parts; ++p) stream_cache_line(to + p * part + q, from + p * part + q);
  stream_copy(to + Parts * part, from + Parts * part, n - head - Parts * part);
}

// Orders this thread's non-temporal stores before its later stores (SFENCE).
inline void fence_streams() {
  _mm_sfence();
}

}  // namespace x86
}  // namespace kstencil
