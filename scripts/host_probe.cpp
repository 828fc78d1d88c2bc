// Stand-alone host probe behind the "Host" notes in docs/PERFORMANCE.md: what one 2-core machine
// moves for copies (memcpy as deep_copy does it, a plain loop, non-temporal stores) and for the
// 7-point stencil in plain C++ (plain stores, y-blocked, non-temporal stores), N^3 doubles.
//   g++ -O3 -fopenmp -ffp-contract=off [-march=native] scripts/host_probe.cpp -o host_probe
//   OMP_NUM_THREADS=2 ./host_probe [N]
// Figures are bytes counted as the Laplacian's FOM counts them (2 x 8 B per point) over the median
// of 7 runs. x86-64 only (SSE2 non-temporal stores; AVX-512 ones where the compiler targets it).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

template <class F>
double median_seconds(F&& f) {
  std::vector<double> times;
  for (int r = 0; r < 7; ++r) {
    const double start = omp_get_wtime();
    f();
    times.push_back(omp_get_wtime() - start);
  }
  std::sort(times.begin(), times.end());
  return times[3];
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 384;
  const long size = n * n * n, sx = n * n, sy = n;
  auto* u = static_cast<double*>(std::aligned_alloc(64, size * 8));
  auto* f = static_cast<double*>(std::aligned_alloc(64, size * 8));
#pragma omp parallel for
  for (long i = 0; i < size; i++) {
    u[i] = i % 7 * 0.1;
    f[i] = 0;
  }
  const double bytes = 2.0 * size * 8;
  auto report = [&](const char* name, double seconds) {
    std::printf("%-22s %6.1f GB/s\n", name, bytes / seconds * 1e-9);
  };
  report("memcpy per thread", median_seconds([&] {
#pragma omp parallel
           {
             const long chunk = size / omp_get_num_threads();
             std::memcpy(f + omp_get_thread_num() * chunk, u + omp_get_thread_num() * chunk,
                         chunk * 8);
           }
         }));
  report("copy loop", median_seconds([&] {
#pragma omp parallel for
           for (long i = 0; i < size; i++) f[i] = u[i];
         }));
  report("copy, nt stores", median_seconds([&] {
#pragma omp parallel for
           for (long i = 0; i < size; i += 2) _mm_stream_pd(f + i, _mm_load_pd(u + i));
           _mm_sfence();
         }));
  auto point = [&](const double* c, long k) {
    return c[k] * -6.0 + c[k - sx] + c[k + sx] + c[k - sy] + c[k + sy] + c[k - 1] + c[k + 1];
  };
  report("stencil", median_seconds([&] {
#pragma omp parallel for collapse(2)
           for (long i = 1; i < n - 1; i++)
             for (long j = 1; j < n - 1; j++) {
               const double* __restrict c = u + i * sx + j * sy;
               double* __restrict out = f + i * sx + j * sy;
               for (long k = 1; k < n - 1; k++) out[k] = point(c, k);
             }
         }));
  const std::vector<double> plain(f, f + size);
  for (long block : {16L, 64L})
    report(block == 16 ? "stencil, y blocks 16" : "stencil, y blocks 64", median_seconds([&] {
#pragma omp parallel for collapse(2)
             for (long jb = 0; jb < (n - 2 + block - 1) / block; jb++)
               for (long i = 1; i < n - 1; i++)
                 for (long j = 1 + jb * block; j < std::min(n - 1, 1 + (jb + 1) * block); j++) {
                   const double* __restrict c = u + i * sx + j * sy;
                   double* __restrict out = f + i * sx + j * sy;
                   for (long k = 1; k < n - 1; k++) out[k] = point(c, k);
                 }
           }));
  // Non-temporal stores of whole aligned pairs: the line's first and last pairs carry the boundary
  // value of f back unchanged, so every store is a full, aligned vector (n even).
  report("stencil, nt stores", median_seconds([&] {
#pragma omp parallel for collapse(2)
           for (long i = 1; i < n - 1; i++)
             for (long j = 1; j < n - 1; j++) {
               const double* c = u + i * sx + j * sy;
               double* out = f + i * sx + j * sy;
               _mm_stream_pd(out, _mm_set_pd(point(c, 1), out[0]));
               const __m128d centre_weight = _mm_set1_pd(-6.0);
               for (long k = 2; k < n - 2; k += 2) {
                 __m128d r = _mm_mul_pd(_mm_load_pd(c + k), centre_weight);
                 r = _mm_add_pd(r, _mm_load_pd(c + k - sx));
                 r = _mm_add_pd(r, _mm_load_pd(c + k + sx));
                 r = _mm_add_pd(r, _mm_load_pd(c + k - sy));
                 r = _mm_add_pd(r, _mm_load_pd(c + k + sy));
                 r = _mm_add_pd(r, _mm_loadu_pd(c + k - 1));
                 r = _mm_add_pd(r, _mm_loadu_pd(c + k + 1));
                 _mm_stream_pd(out + k, r);
               }
               _mm_stream_pd(out + n - 2, _mm_set_pd(out[n - 1], point(c, n - 2)));
             }
           _mm_sfence();
         }));
  long mismatches = 0;
  for (long i = 0; i < size; i++) mismatches += f[i] != plain[i];
  std::printf("nt stencil against plain stencil: %ld of %ld values differ\n", mismatches, size);
  std::free(u);
  std::free(f);
}
