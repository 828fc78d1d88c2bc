#pragma once
// Stores for outputs a kernel never reads back. On GPUs they are marked evict-first (CUDA
// st.global.cs, HIP non-temporal) so they do not push the inputs' reused lines out of the L2. On
// x86 hosts with AVX, store_line and copy_line write the whole 64-byte cache lines of a line of
// results with non-temporal stores: a plain store first reads the line it writes (read for
// ownership), so a kernel that reads one field and writes another moves 24 bytes per point through
// DRAM with plain stores and 16 with non-temporal ones (docs/PERFORMANCE.md, host section).
// Elsewhere they are plain stores.
#include <Kokkos_Core.hpp>
#include <cstdint>

#if defined(__AVX__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define KSTENCIL_HOST_STREAMING_STORES 1
#include <immintrin.h>
#endif

namespace kstencil {

template <bool Streaming, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_output(T* where, const T value) {
#if defined(__CUDA_ARCH__)
  if (Streaming) {
    __stcs(where, value);
    return;
  }
#elif defined(__HIP_DEVICE_COMPILE__)
  if (Streaming) {
    __builtin_nontemporal_store(value, where);
    return;
  }
#endif
  *where = value;
}

// Whether store_line<true> writes whole cache lines with non-temporal stores in this build's host
// code (x86 with AVX: host-only builds compile with -march=native unless KSTENCIL_NATIVE is off).
constexpr bool host_streaming_stores_compiled() {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  return true;
#else
  return false;
#endif
}

#ifdef KSTENCIL_HOST_STREAMING_STORES
inline constexpr int cache_line_bytes = 64;

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
#endif

// Bytes ahead of the current point at which store_line prefetches the input it reads first: one
// 4 KiB page, so that the next page's lines are on their way before the hardware prefetcher, which
// stops at page boundaries, would start on them (256-1024 points ahead measured alike in double,
// docs/PERFORMANCE.md).
inline constexpr int read_ahead_bytes = 4096;

// out[q] = value_at(q) for q in [0, n), and with zero_ends also out[-1] = out[n] = 0. Streaming on
// an AVX host: the cache lines that lie wholly inside the range are computed into a buffer of one
// line and written with non-temporal stores, the partial lines at both ends plainly, so no point
// outside the range is written; with each line read_first + q + read_ahead_bytes is prefetched
// (read_first: the input whose lines the kernel reads first, from memory rather than from a
// cache). Where the zeroed ends complete the first and last cache lines
// (line_with_ends_fills_cache_lines), those lines are streamed whole too. The caller ends its
// work item with fence_streamed_stores(). Elsewhere store_output<Streaming> per point.
template <bool Streaming, class T, class ValueAt>
KOKKOS_FORCEINLINE_FUNCTION void store_line(T* KOKKOS_RESTRICT out, const int n,
                                            const ValueAt& value_at,
                                            [[maybe_unused]] const T* read_first,
                                            const bool zero_ends = false) {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if (Streaming) {
    constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
    alignas(cache_line_bytes) T line[per_line];
    const auto stream_line_at = [&](const int q) {
      // Integer arithmetic: the address may lie past the input's end, which a prefetch ignores.
      _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(read_first + q) +
                                                 read_ahead_bytes),
                   _MM_HINT_T0);
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
    return;
  }
#endif
  for (int q = 0; q < n; ++q) store_output<Streaming>(out + q, value_at(q));
  if (zero_ends) {
    store_output<Streaming>(out - 1, T(0));
    store_output<Streaming>(out + n, T(0));
  }
}

// out[q] = in[q] for q in [0, n), streaming as store_line does. A copy has no arithmetic to hide
// a buffer's extra load and store behind: the whole lines go straight from the loads to the
// non-temporal stores (42.8 GB/s against 34.3 through a buffer, 384^3 doubles on the development
// machine, docs/PERFORMANCE.md).
template <bool Streaming, class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_line(T* KOKKOS_RESTRICT out, const T* KOKKOS_RESTRICT in,
                                           const int n) {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if (Streaming) {
    constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
    const int head = points_before_line_boundary(out, n);
    int q = 0;
    for (; q < head; ++q) out[q] = in[q];
    for (; q + per_line <= n; q += per_line) stream_cache_line(out + q, in + q);
    for (; q < n; ++q) out[q] = in[q];
    return;
  }
#endif
  for (int q = 0; q < n; ++q) store_output<Streaming>(out + q, in[q]);
}

// out[q] = in[q] for q in [0, n), as copy_line, with the whole lines in `Parts` equal parts copied
// a line from each part in turn: each part is a stream of its own for the core's prefetchers, and
// one core keeps more lines in flight over several streams than over one (a copy of 384^3
// doubles on 2 Xeon cores: 40.8 GB/s through one stream, 47.5 through 2, 50.8 through 4 and 49.8
// through 8; docs/PERFORMANCE.md).
template <bool Streaming, int Parts, class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_line_in_parts(T* KOKKOS_RESTRICT out,
                                                    const T* KOKKOS_RESTRICT in, const int n) {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if (Streaming) {
    constexpr int per_line = cache_line_bytes / static_cast<int>(sizeof(T));
    const int head = points_before_line_boundary(out, n);
    for (int q = 0; q < head; ++q) out[q] = in[q];
    const int part = (n - head) / (Parts * per_line) * per_line;
    T* const to = out + head;
    const T* const from = in + head;
    for (int q = 0; q < part; q += per_line)
      for (int p = 0; p < Parts; ++p) stream_cache_line(to + p * part + q, from + p * part + q);
    copy_line<true>(to + Parts * part, from + Parts * part, n - head - Parts * part);
    return;
  }
#endif
  copy_line<Streaming>(out, in, n);
}

// Orders this thread's non-temporal stores before its later stores (x86 SFENCE), so that a kernel
// that ends after them hands over complete results; nothing where store_line streams nothing.
template <bool Streaming>
KOKKOS_FORCEINLINE_FUNCTION void fence_streamed_stores() {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if (Streaming) _mm_sfence();
#endif
}

}  // namespace kstencil
