// What host_planes_probe.cpp measures its stencils against (the copies) and its timing and report
// loop; kept apart so that a new probe can reuse them. x86-64 only (SSE2/AVX non-temporal stores).
#pragma once
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace probe {

#ifdef __AVX__
constexpr long vector_doubles = 4;
inline void stream(double* to, const double* from) {
  _mm256_stream_pd(to, _mm256_load_pd(from));
}
#else
constexpr long vector_doubles = 2;
inline void stream(double* to, const double* from) {
  _mm_stream_pd(to, _mm_load_pd(from));
}
#endif

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Variant {
  std::string name;
  std::function<void()> run;
  bool stencil;  // compared bitwise with the variant named "stencil"
};

// The copies every report is read against: a plain loop (variant 0), memcpy per thread (variant
// 1) and non-temporal stores, `size` doubles from u to f (both 64-byte aligned).
inline void add_copies(std::vector<Variant>& variants, const double* u, double* f,
                       const long size) {
  variants.push_back({"copy loop",
                      [=] {
#pragma omp parallel for
                        for (long i = 0; i < size; i++) f[i] = u[i];
                      },
                      false});
  variants.push_back({"memcpy per thread",
                      [=] {
#pragma omp parallel
                        {
                          const long chunk = size / omp_get_num_threads();
                          const long first = omp_get_thread_num() * chunk;
                          std::memcpy(f + first, u + first, chunk * 8);
                        }
                      },
                      false});
  variants.push_back({"copy, nt stores",
                      [=] {
#pragma omp parallel for
                        for (long i = 0; i < size; i += vector_doubles) stream(f + i, u + i);
                        _mm_sfence();
                      },
                      false});
}

// The plain stencil every other stencil variant is compared with (the variant named "stencil"):
// f = point(u row, k) over the interior points, N^3 with strides sx, sy, 1, plain stores.
template <class Point>
void add_reference_stencil(std::vector<Variant>& variants, const double* u, double* f, const long n,
                           const long sx, const long sy, const Point point) {
  variants.push_back({"stencil",
                      [=] {
#pragma omp parallel for collapse(2)
                        for (long i = 1; i < n - 1; i++)
                          for (long j = 1; j < n - 1; j++) {
                            const double* __restrict c = u + i * sx + j * sy;
                            double* __restrict out = f + i * sx + j * sy;
                            for (long k = 1; k < n - 1; k++) out[k] = point(c, k);
                          }
                      },
                      true});
}

// Runs every variant once (first touch of every code path), then `rounds` rounds of each variant
// once, one after another, so a shared machine's bandwidth drifting between seconds moves all of a
// round alike; prints GB/s medians (2 x 8 B per point) and the medians of per-round ratios to the
// two first copies. Every stencil variant's interior points (1..n-2 along each axis, strides sx,
// sy, 1 in f) are compared bitwise with the variant named "stencil". False if any differ.
inline bool time_and_report(const std::vector<Variant>& variants, const int rounds, const long n,
                            const long sx, const long sy, const double* f, const long size) {
  for (auto& variant : variants) variant.run();
  std::vector<std::vector<double>> gbs(variants.size());
  const double bytes = 2.0 * n * n * n * 8;
  for (int round = 0; round < rounds; ++round)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const double start = omp_get_wtime();
      variants[v].run();
      gbs[v].push_back(bytes / (omp_get_wtime() - start) * 1e-9);
    }

  const auto reference_variant = std::find_if(variants.begin(), variants.end(),
                                              [](const Variant& v) { return v.name == "stencil"; });
  if (reference_variant != variants.end()) reference_variant->run();
  const std::vector<double> reference(f, f + size);
  bool all_equal = true;
  std::printf("N %ld, %d threads, %d rounds; GB/s median, then the median of per-round ratios\n", n,
              omp_get_max_threads(), rounds);
  std::printf("%-26s %8s %12s %12s\n", "variant", "GB/s", "/copy loop", "/memcpy");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::vector<double> to_loop, to_memcpy;
    for (int round = 0; round < rounds; ++round) {
      to_loop.push_back(gbs[v][round] / gbs[0][round]);
      to_memcpy.push_back(gbs[v][round] / gbs[1][round]);
    }
    std::string mark;
    if (variants[v].stencil) {
      variants[v].run();
      long differ = 0;
      for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < n - 1; j++)
          for (long k = 1; k < n - 1; k++)
            differ += f[i * sx + j * sy + k] != reference[i * sx + j * sy + k];
      if (differ) mark = "  (" + std::to_string(differ) + " interior values differ)";
      all_equal = all_equal && differ == 0;
    }
    std::printf("%-26s %8.1f %12.3f %12.3f%s\n", variants[v].name.c_str(), median(gbs[v]),
                median(to_loop), median(to_memcpy), mark.c_str());
  }
  return all_equal;
}

}  // namespace probe
