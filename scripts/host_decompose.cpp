// Stand-alone probe behind the host note "Where the time goes" in docs/PERFORMANCE.md: the
// streaming line stencil (as kstencil's line kernel) taken apart into its reads alone (from three
// planes, or from one), its non-temporal writes alone (inputs from a cached row), and variants
// with register blocks along the slowest axis or y and x-neighbours by shuffles, N^3 doubles.
//   g++ -O3 -fopenmp -ffp-contract=off -march=native scripts/host_decompose.cpp -o host_decompose
//   OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads ./host_decompose [N [rounds]]
// N is a multiple of 8. KEEP="|name|name|" keeps the named variants (and the copies and the plain
// stencil); PAD=p pads each plane by p doubles; FOFF=p shifts the stencils' f by p doubles (the
// copies keep u and f at the same page offset). Each round runs every
// variant once; ratios are medians of per-round ratios; figures count 2 x 8 B per point. Stencil
// variants' interiors are compared bitwise with the plain stencil (scripts/probe_common.hpp; exit 1
// if any differ). x86-64 with AVX2.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_common.hpp"

using probe::Variant;

struct K {
  long n, sx, sy;
  const double* u;
  double* f;
  __m256d vc, vx, vy, vz;
  double ac, ax, ay, az;
  double point(const double* c, long k) const {
    return ac * c[k] + ax * (c[k - sx] + c[k + sx]) + ay * (c[k - sy] + c[k + sy]) +
           az * (c[k - 1] + c[k + 1]);
  }
  long first_aligned(const double* out) const {
    long k = 1;
    while (reinterpret_cast<std::uintptr_t>(out + k) % 64) k++;
    return std::min(k, n - 1);
  }
  static void ahead(const double* p) {
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + 4096),
                 _MM_HINT_T0);
  }
  // B points along the slowest axis (Planes) or along y per work item, the B + 2 centres of the
  // block's column loaded once and used as the neighbours of each other; its B lines streamed
  // directly or (Buffered) through a one-line buffer each. Planes: item counts blocks of planes,
  // each swept row by row; else item is a plane, swept by blocks of rows.
  template <int B, bool Buffered, bool Planes>
  void blocked(long item) const {
    const long bs = Planes ? sx : sy;  // stride along the blocked axis
    const auto block_of_lines = [&](const double* c, double* out, const long count) {
      const long k0 = first_aligned(out);
      long k = 1;
      for (; k < k0; k++)
        for (long b = 0; b < count; b++) out[k + b * bs] = point(c + b * bs, k);
      if (count == B) {
        alignas(64) double buf[B][8];
        for (; k + 8 <= n - 1; k += 8) {
          ahead(c + (Planes ? B : 1) * sx + k);
#pragma GCC unroll 2
          for (int h = 0; h < 8; h += 4) {
            __m256d column[B + 2];
#pragma GCC unroll 8
            for (int b = 0; b < B + 2; b++) column[b] = _mm256_loadu_pd(c + (b - 1) * bs + k + h);
#pragma GCC unroll 8
            for (int b = 0; b < B; b++) {
              const double* cc = c + b * bs + k + h;
              const __m256d blocked_pair = _mm256_add_pd(column[b], column[b + 2]);
              const __m256d x_pair =
                  Planes ? blocked_pair
                         : _mm256_add_pd(_mm256_loadu_pd(cc - sx), _mm256_loadu_pd(cc + sx));
              const __m256d y_pair =
                  Planes ? _mm256_add_pd(_mm256_loadu_pd(cc - sy), _mm256_loadu_pd(cc + sy))
                         : blocked_pair;
              __m256d r = _mm256_mul_pd(vc, column[b + 1]);
              r = _mm256_add_pd(r, _mm256_mul_pd(vx, x_pair));
              r = _mm256_add_pd(r, _mm256_mul_pd(vy, y_pair));
              r = _mm256_add_pd(r, _mm256_mul_pd(vz, _mm256_add_pd(_mm256_loadu_pd(cc - 1),
                                                                   _mm256_loadu_pd(cc + 1))));
              if (Buffered)
                _mm256_store_pd(buf[b] + h, r);
              else
                _mm256_stream_pd(out + b * bs + k + h, r);
            }
          }
          if (Buffered)
            for (int b = 0; b < B; b++) {
              _mm256_stream_pd(out + b * bs + k, _mm256_load_pd(buf[b]));
              _mm256_stream_pd(out + b * bs + k + 4, _mm256_load_pd(buf[b] + 4));
            }
        }
      }
      for (; k < n - 1; k++)
        for (long b = 0; b < count; b++) out[k + b * bs] = point(c + b * bs, k);
    };
    if (Planes) {
      const long i0 = 1 + item * B, count = std::min<long>(B, n - 1 - i0);
      for (long j = 1; j < n - 1; j++)
        block_of_lines(u + i0 * sx + j * sy, f + i0 * sx + j * sy, count);
    } else {
      for (long j0 = 1; j0 < n - 1; j0 += B)
        block_of_lines(u + item * sx + j0 * sy, f + item * sx + j0 * sy,
                       std::min<long>(B, n - 1 - j0));
    }
    _mm_sfence();
  }

  // x-neighbours (along k) by shuffles of the centre vectors: loads per 4 points 1 (centre) + 4.
  // Direct: each line's two vectors streamed straight from the registers, else through a buffer.
  template <bool Direct>
  void shuffled(long i) const {
    for (long j = 1; j < n - 1; j++) {
      const double* c = u + i * sx + j * sy;
      double* out = f + i * sx + j * sy;
      const long k0 = first_aligned(out);
      long k = 1;
      for (; k < k0; k++) out[k] = point(c, k);
      if (k + 8 <= n - 1) {
        __m256d prev = _mm256_loadu_pd(c + k - 4), lo = _mm256_loadu_pd(c + k),
                hi = _mm256_loadu_pd(c + k + 4);
        alignas(64) double buf[8];
        for (; k + 8 <= n - 1; k += 8) {
          ahead(c + sx + k);
          const __m256d next = _mm256_loadu_pd(c + k + 8);
          const __m256d mid = _mm256_permute2f128_pd(lo, hi, 0x21);  // k+2 .. k+5
          const __m256d xm_lo = _mm256_shuffle_pd(_mm256_permute2f128_pd(prev, lo, 0x21), lo, 5);
          const __m256d xp_lo = _mm256_shuffle_pd(lo, mid, 5);
          const __m256d xm_hi = _mm256_shuffle_pd(mid, hi, 5);
          const __m256d xp_hi = _mm256_shuffle_pd(hi, _mm256_permute2f128_pd(hi, next, 0x21), 5);
          const double* cc = c + k;
          __m256d r = _mm256_mul_pd(vc, lo);
          r = _mm256_add_pd(r, _mm256_mul_pd(vx, _mm256_add_pd(_mm256_loadu_pd(cc - sx),
                                                               _mm256_loadu_pd(cc + sx))));
          r = _mm256_add_pd(r, _mm256_mul_pd(vy, _mm256_add_pd(_mm256_loadu_pd(cc - sy),
                                                               _mm256_loadu_pd(cc + sy))));
          r = _mm256_add_pd(r, _mm256_mul_pd(vz, _mm256_add_pd(xm_lo, xp_lo)));
          const __m256d r_lo = r;
          cc += 4;
          r = _mm256_mul_pd(vc, hi);
          r = _mm256_add_pd(r, _mm256_mul_pd(vx, _mm256_add_pd(_mm256_loadu_pd(cc - sx),
                                                               _mm256_loadu_pd(cc + sx))));
          r = _mm256_add_pd(r, _mm256_mul_pd(vy, _mm256_add_pd(_mm256_loadu_pd(cc - sy),
                                                               _mm256_loadu_pd(cc + sy))));
          r = _mm256_add_pd(r, _mm256_mul_pd(vz, _mm256_add_pd(xm_hi, xp_hi)));
          if (Direct) {
            _mm256_stream_pd(out + k, r_lo);
            _mm256_stream_pd(out + k + 4, r);
          } else {
            _mm256_store_pd(buf, r_lo);
            _mm256_store_pd(buf + 4, r);
            _mm256_stream_pd(out + k, _mm256_load_pd(buf));
            _mm256_stream_pd(out + k + 4, _mm256_load_pd(buf + 4));
          }
          prev = hi;
          lo = next;
          hi = _mm256_loadu_pd(c + k + 12);
        }
      }
      for (; k < n - 1; k++) out[k] = point(c, k);
    }
    _mm_sfence();
  }

  // decomposition: Mode 0 reads only (sum), 1 compute from a cached row + NT stores everywhere
  template <int Mode>
  double decomposed(long i) const {
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    for (long j = 1; j < n - 1; j++) {
      const double* c = Mode != 1 ? u + i * sx + j * sy : u + 1 * sx + 1 * sy;
      const long px = Mode == 2 ? 0 : sx;
      double* out = f + i * sx + j * sy;
      const long k0 = first_aligned(out);
      for (long k = k0; k + 8 <= n - 1; k += 8) {
        if (Mode != 1) ahead(c + px + k);
        const double* cc = c + k;
        __m256d r = _mm256_mul_pd(vc, _mm256_loadu_pd(cc));
        r = _mm256_add_pd(r, _mm256_mul_pd(vx, _mm256_add_pd(_mm256_loadu_pd(cc - px),
                                                             _mm256_loadu_pd(cc + px))));
        r = _mm256_add_pd(r, _mm256_mul_pd(vy, _mm256_add_pd(_mm256_loadu_pd(cc - sy),
                                                             _mm256_loadu_pd(cc + sy))));
        r = _mm256_add_pd(
            r, _mm256_mul_pd(vz, _mm256_add_pd(_mm256_loadu_pd(cc - 1), _mm256_loadu_pd(cc + 1))));
        cc += 4;
        __m256d q = _mm256_mul_pd(vc, _mm256_loadu_pd(cc));
        q = _mm256_add_pd(q, _mm256_mul_pd(vx, _mm256_add_pd(_mm256_loadu_pd(cc - px),
                                                             _mm256_loadu_pd(cc + px))));
        q = _mm256_add_pd(q, _mm256_mul_pd(vy, _mm256_add_pd(_mm256_loadu_pd(cc - sy),
                                                             _mm256_loadu_pd(cc + sy))));
        q = _mm256_add_pd(
            q, _mm256_mul_pd(vz, _mm256_add_pd(_mm256_loadu_pd(cc - 1), _mm256_loadu_pd(cc + 1))));
        if (Mode != 1) {
          acc0 = _mm256_add_pd(acc0, r);
          acc1 = _mm256_add_pd(acc1, q);
        } else {
          _mm256_stream_pd(out + k, r);
          _mm256_stream_pd(out + k + 4, q);
        }
      }
    }
    _mm_sfence();
    alignas(32) double t[4];
    _mm256_store_pd(t, _mm256_add_pd(acc0, acc1));
    return t[0] + t[1] + t[2] + t[3];
  }
};
int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 384;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  const long pad = std::getenv("PAD") ? std::atol(std::getenv("PAD")) : 0;
  const long sy = n, sx = n * n + pad, size = n * sx;
  // The blocked variants stream every line of a block from the first line's alignment.
  if (n % 8 != 0 || pad % 8 != 0 || n < 16 || rounds < 1) {
    std::fprintf(stderr,
                 "host_decompose: N and PAD must be multiples of 8, N >= 16, rounds >= 1\n");
    return 2;
  }
  auto* u = static_cast<double*>(
      std::aligned_alloc(2 << 20, (size * 8 + (2 << 20)) / (2 << 20) * (2 << 20)));
  const long foff = std::getenv("FOFF") ? std::atol(std::getenv("FOFF")) : 0;
  auto* f_allocation = static_cast<double*>(
      std::aligned_alloc(2 << 20, (size * 8 + (4 << 20)) / (2 << 20) * (2 << 20)));
  auto* f = f_allocation + foff;
#pragma omp parallel for
  for (long i = 0; i < size; i++) {
    u[i] = i % 7 * 0.1 + (i % 13) * 0.01;
    f[i] = 0;
  }
  const double ax = 1.1, ay = 1.2, az = 1.3, ac = -7.2;  // distinct, as for unequal spacings
  const K kk{n,
             sx,
             sy,
             u,
             f,
             _mm256_set1_pd(ac),
             _mm256_set1_pd(ax),
             _mm256_set1_pd(ay),
             _mm256_set1_pd(az),
             ac,
             ax,
             ay,
             az};
  std::vector<Variant> variants;
  // The copies write the unshifted allocation: glibc's memcpy falls to a slower path when source
  // and destination sit at nearby offsets in their pages (0.28-0.36 of its rate with f shifted
  // by 8 or 40 doubles), which would inflate every ratio to it.
  probe::add_copies(variants, u, f_allocation, size);
  probe::add_reference_stencil(variants, u, f, n, sx, sy,
                               [kk](const double* c, long k) { return kk.point(c, k); });
  // generic: as the kernel, line buffer
  variants.push_back({"nt lines+ahead",
                      [=] {
#pragma omp parallel for
                        for (long i = 1; i < n - 1; i++) {
                          for (long j = 1; j < n - 1; j++) {
                            const double* __restrict c = u + i * sx + j * sy;
                            double* __restrict out = f + i * sx + j * sy;
                            const long k0 = kk.first_aligned(out);
                            long k = 1;
                            for (; k < k0; k++) out[k] = kk.point(c, k);
                            for (; k + 8 <= n - 1; k += 8) {
                              K::ahead(c + sx + k);
                              alignas(64) double line[8];
                              for (int p = 0; p < 8; p++) line[p] = kk.point(c, k + p);
                              _mm256_stream_pd(out + k, _mm256_load_pd(line));
                              _mm256_stream_pd(out + k + 4, _mm256_load_pd(line + 4));
                            }
                            for (; k < n - 1; k++) out[k] = kk.point(c, k);
                          }
                          _mm_sfence();
                        }
                      },
                      true});
  variants.push_back({"shuffled direct",
                      [=] {
#pragma omp parallel for
                        for (long i = 1; i < n - 1; i++) kk.shuffled<true>(i);
                      },
                      true});
  variants.push_back({"reads only",
                      [=] {
                        double total = 0;
#pragma omp parallel for reduction(+ : total)
                        for (long i = 1; i < n - 1; i++) total += kk.decomposed<0>(i);
                        if (total == 12345.678) std::printf("!");
                      },
                      false});
  variants.push_back({"reads only, 1 plane",
                      [=] {
                        double total = 0;
#pragma omp parallel for reduction(+ : total)
                        for (long i = 1; i < n - 1; i++) total += kk.decomposed<2>(i);
                        if (total == 12345.678) std::printf("!");
                      },
                      false});
  variants.push_back({"nt writes, cached u",
                      [=] {
#pragma omp parallel for
                        for (long i = 1; i < n - 1; i++) kk.decomposed<1>(i);
                      },
                      false});
  variants.push_back({"reads only copy",
                      [=] {
                        double total = 0;
#pragma omp parallel for reduction(+ : total)
                        for (long i = 0; i < size; i += 8) total += u[i];
                        if (total == 12345.678) std::printf("!");
                      },
                      false});
  variants.push_back({"shuffled",
                      [=] {
#pragma omp parallel for
                        for (long i = 1; i < n - 1; i++) kk.shuffled<false>(i);
                      },
                      true});
  for (bool B : {false, true}) {
    const std::string sfx = B ? " buf" : "";
    variants.push_back({"intr planes 1" + sfx,
                        [=] {
#pragma omp parallel for
                          for (long ib = 0; ib < n - 2; ib++)
                            B ? kk.blocked<1, true, true>(ib) : kk.blocked<1, false, true>(ib);
                        },
                        true});
    variants.push_back({"intr planes 2" + sfx,
                        [=] {
#pragma omp parallel for
                          for (long ib = 0; ib < (n - 1) / 2; ib++)
                            B ? kk.blocked<2, true, true>(ib) : kk.blocked<2, false, true>(ib);
                        },
                        true});
    variants.push_back({"intr planes 4" + sfx,
                        [=] {
#pragma omp parallel for
                          for (long ib = 0; ib < (n + 1) / 4; ib++)
                            B ? kk.blocked<4, true, true>(ib) : kk.blocked<4, false, true>(ib);
                        },
                        true});
    variants.push_back({"intr rows 2" + sfx,
                        [=] {
#pragma omp parallel for
                          for (long i = 1; i < n - 1; i++)
                            B ? kk.blocked<2, true, false>(i) : kk.blocked<2, false, false>(i);
                        },
                        true});
    variants.push_back({"intr rows 4" + sfx,
                        [=] {
#pragma omp parallel for
                          for (long i = 1; i < n - 1; i++)
                            B ? kk.blocked<4, true, false>(i) : kk.blocked<4, false, false>(i);
                        },
                        true});
  }
  const char* keep = std::getenv("KEEP");
  if (keep) {
    std::vector<Variant> kept;
    for (auto& v : variants)
      if (v.name == "copy loop" || v.name == "stencil" || v.name == "memcpy per thread" ||
          std::string(keep).find("|" + v.name + "|") != std::string::npos)
        kept.push_back(v);
    variants = kept;
  }
  return probe::time_and_report(variants, rounds, n, sx, sy, f, size) ? 0 : 1;
}
