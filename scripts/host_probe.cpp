// Stand-alone host probe behind the "Host" notes in docs/PERFORMANCE.md: what one machine moves
// for copies (memcpy per thread, a plain loop, non-temporal stores) and for the 7-point stencil in
// plain C++ with each host technique tried (plain stores, non-temporal stores from a row buffer or
// line by line as kstencil's line kernel with and without a 4 KiB read-ahead, y blocks that keep
// three planes of a slab in a 512 KiB L2, software prefetch of the plane above), N^3 doubles.
//   g++ -O3 -fopenmp -ffp-contract=off -mavx2 scripts/host_probe.cpp -o host_probe
//   OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads ./host_probe [N [rounds]]
// HUGE=1 in the environment asks for transparent huge pages (madvise) on both arrays.
// Each round runs every variant once, one after another, so a shared machine's bandwidth drifting
// between seconds moves all of a round alike: the ratios are medians of per-round ratios. Figures
// are bytes counted as the Laplacian's FOM counts them (2 x 8 B per point). Every stencil variant's
// interior is compared bitwise with the plain one. x86-64 only (SSE2/AVX non-temporal stores).
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_common.hpp"

using probe::stream;
using probe::Variant;
using probe::vector_doubles;

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 384;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 15;
  if (n % vector_doubles != 0 || n < 8 || rounds < 1) {
    std::fprintf(stderr, "host_probe: N must be a multiple of %ld and at least 8, rounds >= 1\n",
                 vector_doubles);
    return 2;
  }
  const long size = n * n * n, sx = n * n, sy = n;
  const long huge_page = 2L << 20, allocated = (size * 8 + huge_page - 1) / huge_page * huge_page;
  auto* u = static_cast<double*>(std::aligned_alloc(huge_page, allocated));
  auto* f = static_cast<double*>(std::aligned_alloc(huge_page, allocated));
  if (std::getenv("HUGE") &&
      (madvise(u, allocated, MADV_HUGEPAGE) != 0 || madvise(f, allocated, MADV_HUGEPAGE) != 0))
    std::perror("madvise");
#pragma omp parallel for
  for (long i = 0; i < size; i++) {
    u[i] = i % 7 * 0.1;
    f[i] = 0;
  }
  const double ax = 1.1, ay = 1.2, az = 1.3, ac = -7.2;  // distinct, as for unequal spacings
  auto point = [=](const double* c, long k) {
    return ac * c[k] + ax * (c[k - sx] + c[k + sx]) + ay * (c[k - sy] + c[k + sy]) +
           az * (c[k - 1] + c[k + 1]);
  };
  auto plain_line = [=](long i, long j) {
    const double* __restrict c = u + i * sx + j * sy;
    double* __restrict out = f + i * sx + j * sy;
    for (long k = 1; k < n - 1; k++) out[k] = point(c, k);
  };

  std::vector<Variant> variants;
  probe::add_copies(variants, u, f, size);
  probe::add_reference_stencil(variants, u, f, n, sx, sy, point);
  // Computed into a row buffer in the L1, then streamed out as whole aligned vectors; the row ends
  // are stored 0 (f's boundary value), so no line of f is ever read.
  variants.push_back({"stencil, nt stores",
                      [=] {
#pragma omp parallel
                        {
                          std::vector<double> row(n + vector_doubles);
                          double* buffer = row.data();
                          while (reinterpret_cast<std::uintptr_t>(buffer) % 32) ++buffer;
#pragma omp for collapse(2)
                          for (long i = 1; i < n - 1; i++)
                            for (long j = 1; j < n - 1; j++) {
                              const double* __restrict c = u + i * sx + j * sy;
                              buffer[0] = buffer[n - 1] = 0;
                              for (long k = 1; k < n - 1; k++) buffer[k] = point(c, k);
                              for (long k = 0; k < n; k += vector_doubles)
                                stream(f + i * sx + j * sy + k, buffer + k);
                            }
                          _mm_sfence();
                        }
                      },
                      true});
  // As kstencil's line kernel with streaming stores (src/core/stores.hpp): each whole cache line
  // of a row computed into a one-line buffer and streamed out, the partial lines at the row's ends
  // stored plainly, one fence per plane; optionally u's plane above prefetched 4 KiB ahead.
  for (bool read_ahead : {false, true})
    variants.push_back(
        {read_ahead ? "stencil, nt lines+ahead" : "stencil, nt lines",
         [=] {
#pragma omp parallel for
           for (long i = 1; i < n - 1; i++) {
             for (long j = 1; j < n - 1; j++) {
               const double* __restrict c = u + i * sx + j * sy;
               double* __restrict out = f + i * sx + j * sy;
               const long offset = reinterpret_cast<std::uintptr_t>(out + 1) % 64 / 8;
               long k = 1;
               for (; offset != 0 && k < 1 + 8 - offset; k++) out[k] = point(c, k);
               for (; k + 8 <= n - 1; k += 8) {
                 if (read_ahead)
                   _mm_prefetch(reinterpret_cast<const char*>(
                                    reinterpret_cast<std::uintptr_t>(c + sx + k) + 4096),
                                _MM_HINT_T0);
                 alignas(64) double line[8];
                 for (int p = 0; p < 8; p++) line[p] = point(c, k + p);
                 for (int p = 0; p < 8; p += vector_doubles) stream(out + k + p, line + p);
               }
               for (; k < n - 1; k++) out[k] = point(c, k);
             }
             _mm_sfence();
           }
         },
         true});
  for (long block : {16L, 40L})
    variants.push_back({"stencil, y blocks " + std::to_string(block),
                        [=] {
#pragma omp parallel for collapse(2)
                          for (long jb = 0; jb < (n - 2 + block - 1) / block; jb++)
                            for (long i = 1; i < n - 1; i++)
                              for (long j = 1 + jb * block;
                                   j < std::min(n - 1, 1 + (jb + 1) * block); j++)
                                plain_line(i, j);
                        },
                        true});
  variants.push_back({"stencil, prefetch 8 rows",
                      [=] {
#pragma omp parallel for collapse(2)
                        for (long i = 1; i < n - 1; i++)
                          for (long j = 1; j < n - 1; j++) {
                            const double* ahead = u + (i + 1) * sx + (j + 8) * sy;
                            if (i + 1 < n && j + 8 < n)
                              for (long k = 0; k < n; k += 8)
                                _mm_prefetch(reinterpret_cast<const char*>(ahead + k), _MM_HINT_T0);
                            plain_line(i, j);
                          }
                      },
                      true});

  const bool all_equal = probe::time_and_report(variants, rounds, n, sx, sy, f, size);
  std::free(u);
  std::free(f);
  return all_equal ? 0 : 1;
}
