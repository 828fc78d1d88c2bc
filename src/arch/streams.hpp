#pragma once
// The one interface to hand-written host SIMD. Kernels call store_line, copy_line_in_parts,
// stencil_lines, prefetch_stream and fence_streamed_stores; on x86 hosts with AVX (AVX2 or AVX-512
// for stencil_lines) they run the intrinsics under arch/x86/, everywhere else (GPUs, other hosts,
// Streaming = false) the portable loops beside them. Both paths give bitwise the same results.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "arch/prefetch.hpp"
#include "core/scalar_ops.hpp"
#include "core/stores.hpp"
#include "laplacian/stencil.hpp"

#if defined(__AVX__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define KSTENCIL_HOST_STREAMING_STORES 1
#include "arch/x86/streams.hpp"
#if defined(__AVX2__)
#define KSTENCIL_HOST_SIMD_LINES 1
#include "arch/x86/stencil_lines.hpp"
#endif
#endif

namespace kstencil {

// f(cache) with the cache as a std::integral_constant, so that the loops of a row prefetch into
// one cache known at compile time (a choice made at each prefetch slowed the rows).
template <class F>
KOKKOS_FORCEINLINE_FUNCTION decltype(auto) with_prefetch_cache(const PrefetchInto into,
                                                               const F& f) {
  switch (into) {
    case PrefetchInto::l2:
      return f(std::integral_constant<PrefetchInto, PrefetchInto::l2>{});
    case PrefetchInto::both:
      return f(std::integral_constant<PrefetchInto, PrefetchInto::both>{});
    case PrefetchInto::l1:
      break;
  }
  return f(std::integral_constant<PrefetchInto, PrefetchInto::l1>{});
}

// Whether Streaming = true writes host lines with non-temporal stores in this build (x86 with
// AVX: host-only builds compile with -march=native unless KSTENCIL_NATIVE is off).
constexpr bool host_streaming_stores_compiled() {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  return true;
#else
  return false;
#endif
}

// Whether stencil_lines updates several planes' rows together, vectorised by hand (AVX2 or
// AVX-512), in this build.
constexpr bool host_simd_lines_compiled() {
#ifdef KSTENCIL_HOST_SIMD_LINES
  return true;
#else
  return false;
#endif
}

#ifdef KSTENCIL_HOST_SIMD_LINES
// The widest vectors this build's host rows use.
#if defined(__AVX512F__)
template <class T>
using HostLineVectors = x86::Zmm<T>;
#else
template <class T>
using HostLineVectors = x86::Ymm<T>;
#endif
#endif

// out[q] = value_at(q) for q in [0, n), and with zero_ends also out[-1] = out[n] = 0. Streaming on
// an AVX host: whole cache lines through non-temporal stores, prefetching read_first (the input
// read first) as `prefetch` says (none for bytes 0); the caller ends its work item with
// fence_streamed_stores().
template <bool Streaming, class T, class ValueAt>
KOKKOS_FORCEINLINE_FUNCTION void store_line(T* KOKKOS_RESTRICT out, const int n,
                                            const ValueAt& value_at,
                                            [[maybe_unused]] const T* read_first,
                                            const bool zero_ends = false,
                                            [[maybe_unused]] const Prefetch prefetch = {}) {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if constexpr (Streaming)
    return with_prefetch_cache(prefetch.into, [&](const auto into) {
      x86::stream_line<decltype(into)::value>(out, n, value_at, read_first, zero_ends,
                                              prefetch.bytes);
    });
#endif
  for (int q = 0; q < n; ++q) store_output<Streaming>(out + q, value_at(q));
  if (zero_ends) {
    store_output<Streaming>(out - 1, T(0));
    store_output<Streaming>(out + n, T(0));
  }
}

// The bytes a loop that calls prefetch_stream once per stream advances between calls: one line.
inline constexpr int prefetch_stride_bytes = 64;

// The line kernels' default distances (kernel.prefetch = "auto") at which each row prefetches the
// streams it reads from memory: the hardware prefetchers alone kept too few lines in flight for a
// core that reads many streams (docs/PERFORMANCE.md, host sections). Rows of several streams 2 KiB
// ahead (FDTD's only where a core's L1 data cache holds at least 48 KiB: fdtd_prefetch_bytes); the
// Laplacian's one-plane AVX row, which prefetches its input only, one 4 KiB page ahead, so the next
// page's lines are on their way before the hardware prefetcher, which stops at page boundaries,
// would start on them.
inline constexpr int default_prefetch_bytes = 2048;
inline constexpr int default_single_stream_prefetch_bytes = 4096;

// FDTD's rows (6 to 8 streams from memory, their neighbours from the caches) prefetch only where a
// core's L1 data cache holds 48 KiB or more (or is unknown): with 32 KiB (a Zen 4 EPYC) the rows
// without prefetches moved more (docs/PERFORMANCE.md, FDTD on hosts).
inline constexpr std::int64_t fdtd_prefetch_min_l1d_bytes = std::int64_t(48) << 10;
constexpr int fdtd_prefetch_bytes(const std::int64_t l1d_bytes) {
  return l1d_bytes > 0 && l1d_bytes < fdtd_prefetch_min_l1d_bytes ? 0 : default_prefetch_bytes;
}

// Whether the line kernels' rows prefetch in this build (x86 hosts with AVX), so kernel.prefetch
// other than 0 has an effect.
constexpr bool host_prefetch_compiled() {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  return true;
#else
  return false;
#endif
}

// A hint that p's stream, read from memory, is read on: on AVX hosts its line `bytes` ahead is
// prefetched into the cache Into names; nothing elsewhere. Callers with kernel.prefetch = 0 do not
// call it.
template <PrefetchInto Into, class T>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_stream([[maybe_unused]] const T* p,
                                                 [[maybe_unused]] const int bytes) {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  x86::prefetch_from_memory<Into>(p, bytes);
#endif
}

// out[q] = in[q] for q in [0, n); streaming on AVX hosts through `Parts` interleaved streams.
template <bool Streaming, int Parts, class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_line_in_parts(T* KOKKOS_RESTRICT out,
                                                    const T* KOKKOS_RESTRICT in, const int n) {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if constexpr (Streaming) return x86::stream_copy_in_parts<Parts>(out, in, n);
#endif
  for (int q = 0; q < n; ++q) store_output<Streaming>(out + q, in[q]);
}

// Orders this thread's streamed stores before its later stores, so a kernel that ends after them
// hands over complete results; nothing where nothing streams.
template <bool Streaming>
KOKKOS_FORCEINLINE_FUNCTION void fence_streamed_stores() {
#ifdef KSTENCIL_HOST_STREAMING_STORES
  if constexpr (Streaming) x86::fence_streams();
#endif
}

// The values a portable row with Norm computes before it stores them and sums their squares (its
// chunks start on the output's cache lines, so only a row's two ends are partial), and the partial
// sums it keeps: four vectors of eight doubles, four independent chains of additions.
inline constexpr int portable_norm_chunk = 512;
inline constexpr int portable_norm_lanes = 32;

// One row of `planes` planes, vectorised by the compiler: stencil_lines' portable path (`origin`:
// the offset of c from the row `point` was made for).
template <bool Streaming, class KokkosLayout, bool Norm, class T, class Point>
KOKKOS_FORCEINLINE_FUNCTION double portable_lines(const T* KOKKOS_RESTRICT c,
                                                  T* KOKKOS_RESTRICT out, const int n,
                                                  const int planes, const std::ptrdiff_t ss,
                                                  const std::ptrdiff_t sy, const Point& point,
                                                  const std::ptrdiff_t origin, const RowEnds ends,
                                                  const Prefetch prefetch) {
  constexpr bool z_lines = x_is_slowest<KokkosLayout>();
  const bool zero_ends = ends == RowEnds::zero;
  double sum = 0;
  for (int p = 0; p < planes; ++p) {
    const T* KOKKOS_RESTRICT cp = c + p * ss;
    const auto value = [cp, ss, sy, point, p, origin](const int q) {
      const T slow_pair = cp[q - ss] + cp[q + ss], line_pair = cp[q - 1] + cp[q + 1];
      return point.template of<ScalarOps<T>>(cp[q], z_lines ? slow_pair : line_pair,
                                             cp[q - sy] + cp[q + sy],
                                             z_lines ? line_pair : slow_pair, origin + p * ss + q);
    };
    T* KOKKOS_RESTRICT const row = out + p * ss;
    if constexpr (!Norm) {
      store_line<Streaming>(row, n, value, cp + ss, zero_ends, prefetch);
    } else {
      // In chunks: the values first (vectorised by the compiler), then their squares in lanes,
      // then the stores.
      constexpr int per_line = 64 / static_cast<int>(sizeof(T));
      double lanes[portable_norm_lanes] = {};
      T values[portable_norm_chunk];
      int q = 0;
      int length = portable_norm_chunk - static_cast<int>(reinterpret_cast<std::uintptr_t>(row) /
                                                          sizeof(T) % std::uintptr_t(per_line));
      while (q < n) {
        if (length > n - q) length = n - q;
        int k = 0;
        for (; k + per_line <= length; k += per_line) {
          if (prefetch.bytes > 0)
            with_prefetch_cache(prefetch.into, [&](const auto into) {
              prefetch_stream<decltype(into)::value>(cp + ss + q + k, prefetch.bytes);
            });
          for (int l = 0; l < per_line; ++l) values[k + l] = value(q + k + l);
        }
        for (; k < length; ++k) values[k] = value(q + k);
        int m = 0;
        for (; m + portable_norm_lanes <= length; m += portable_norm_lanes)
          for (int l = 0; l < portable_norm_lanes; ++l) {
            const double change = static_cast<double>(values[m + l] - cp[q + m + l]);
            lanes[l] += change * change;
          }
        for (; m < length; ++m) {
          const double change = static_cast<double>(values[m] - cp[q + m]);
          lanes[m % portable_norm_lanes] += change * change;
        }
        store_line<Streaming>(
            row + q, length, [&](const int v) { return values[v]; }, cp + ss + q);
        q += length;
        length = portable_norm_chunk;
      }
      if (zero_ends) {
        store_output<Streaming>(row - 1, T(0));
        store_output<Streaming>(row + n, T(0));
      }
      for (int l = 0; l < portable_norm_lanes; ++l) sum += lanes[l];
    }
  }
  return sum;
}

// `rows` rows of S planes of a 7-point stencil along the contiguous axis: out[p * ss + r * sy + q]
// = the point at c[p * ss + r * sy + q] for p in [0, S), r in [0, rows), q in [0, n) (Point::of
// gives a point from its neighbours' pair sums, on values and on vectors; `point` is made for row
// 0, the offsets it gets run on across the rows), and the points either side of each plane's rows
// as `ends` says (RowEnds::input only on AVX2 and AVX-512 hosts, which stream them). With Norm it
// returns the sum of (out - c)^2 over the points: the portable rows each change in T (one rounding
// in float), its square and the sum in double; the AVX2 and AVX-512 rows the S planes' squares at
// a vector in T, the rest in double (JacobiPlan::sum_points; else 0). With streaming stores on AVX2
// and AVX-512 hosts the planes go together (their centre lines loaded once), and rows that are not
// whole cache lines, with the ends between them, as one span; elsewhere row by row and plane by
// plane through store_line.
// prefetch: how far ahead, and into which cache, the streams from memory are prefetched (bytes 0:
// not at all).
template <bool Streaming, int S, class KokkosLayout, bool Norm = false, class T, class Point>
KOKKOS_FORCEINLINE_FUNCTION double stencil_lines(const T* KOKKOS_RESTRICT c, T* KOKKOS_RESTRICT out,
                                                 const int n, const int rows, const int planes,
                                                 const std::ptrdiff_t ss, const std::ptrdiff_t sy,
                                                 const Point& point, const RowEnds ends,
                                                 const Prefetch prefetch) {
#ifdef KSTENCIL_HOST_SIMD_LINES
  if constexpr (Streaming) {
    return with_prefetch_cache(prefetch.into, [&](const auto into) {
      constexpr PrefetchInto Into = decltype(into)::value;
      // A span only where a row with its ends is not whole cache lines: rows that are stream whole
      // one by one, without the span's end-lane bookkeeping.
      const bool span = ends != RowEnds::none && sy == n + 2 &&
                        sy * static_cast<std::ptrdiff_t>(sizeof(T)) % x86::cache_line_bytes != 0;
      double sum = 0;
      for (int r = 0; r < (span ? 1 : rows); ++r) {
        const std::ptrdiff_t o = r * sy;
        const int span_rows = span ? rows : 1;
        if (planes == S)
          sum += x86::stencil_lines_simd<HostLineVectors, S, KokkosLayout, Norm, Into>(
              c + o, out + o, n, span_rows, ss, sy, point, o, ends, prefetch.bytes);
        else
          for (int p = 0; p < planes; ++p)
            sum += x86::stencil_lines_simd<HostLineVectors, 1, KokkosLayout, Norm, Into>(
                c + o + p * ss, out + o + p * ss, n, span_rows, ss, sy, point, o + p * ss, ends,
                prefetch.bytes);
      }
      return sum;
    });
  }
#endif
  double sum = 0;
  for (int r = 0; r < rows; ++r)
    sum += portable_lines<Streaming, KokkosLayout, Norm>(c + r * sy, out + r * sy, n, planes, ss,
                                                         sy, point, r * sy, ends, prefetch);
  return sum;
}

}  // namespace kstencil
