// Stand-alone probe behind the host notes on the Xeon development machine in docs/PERFORMANCE.md:
// how fast one core's memory streams run depending on how many it keeps going, and what that
// means for the line stencil's register block along the slowest axis. N^3 doubles, AVX-512.
// Built by the project with -DKSTENCIL_BUILD_PROBES=ON (tools/probes/CMakeLists.txt), or alone
// in tools/probes:
//   g++ -O3 -fopenmp -ffp-contract=off -march=native host_planes_probe.cpp -o host_planes_probe
//   OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads ./host_planes_probe [N [rounds]]
// Copies: in work items of 16384 doubles as kstencil's copy kernel, each item's whole lines in 1,
// 2, 4 or 8 parts copied a line from each part in turn (non-temporal stores); one part per thread
// with W independent 8-wide FMA chains per line besides the copy (arithmetic that does not wait
// for the loads). Stencils: each thread takes its share of the planes (slowest axis) and sweeps
// them in blocks of BLOCK rows (environment, default 32), P planes of a row at once as kstencil's
// stencil_lines_avx512: centre vectors loaded once, contiguous neighbours by lane shifts
// ("unaligned": by loads instead), non-temporal stores. "pattern" loads what the P = 4 stencil
// loads but only adds three of the vectors; "no stores" computes the P = 4 stencil into a register.
// "whole rows" zeroes the points before and after each row and so writes every cache line of it
// with non-temporal stores (the others store each row's partial end lines point by point; "ymm
// stores": each 64-byte line as two 32-byte non-temporal stores, as kstencil's copy kernel);
// "prefetched" is that with every stream prefetched (kstencil's stencil_lines_avx512 since the
// seventh session of 2026-11-24; PREFETCH_AHEAD bytes and PREFETCH_HINT 0-3 = t0, t1, t2, nta
// change it for the streams from memory). HUGE=1 puts both fields on transparent huge pages.
// KEEP="|name|name|" keeps the named variants (and the copies and the plain stencil). Stencil
// variants are compared bitwise with the plain stencil (probe_common.hpp; exit 1 if any
// differ); ratios are medians of per-round ratios; figures count 2 x 8 B per point.
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_common.hpp"

#ifndef __AVX512F__
#error "host_planes_probe needs AVX-512 (-march=native on a CPU that has it)"
#endif

namespace {

long n_, sx_, sy_;
// "prefetched": how far ahead (bytes) and with which hint (0 t0, 1 t1, 2 t2, 3 nta) the streams
// from memory are prefetched; environment PREFETCH_AHEAD, PREFETCH_HINT (kstencil: 2048, t0).
long memory_ahead_ = 2048;
int memory_hint_ = 0;
const double* u_;
double* f_;
double sink_;
constexpr double ac = -7.2, ax = 1.1, ay = 1.2, az = 1.3;  // distinct, as for unequal spacings

double point(const double* c, long k) {
  return ac * c[k] + ax * (c[k - sx_] + c[k + sx_]) + ay * (c[k - sy_] + c[k + sy_]) +
         az * (c[k - 1] + c[k + 1]);
}

long first_aligned(const double* out) {
  long k = 1;
  while (reinterpret_cast<std::uintptr_t>(out + k) % 64) k++;
  return k;
}

// The sum of a vector's lanes (g++ 12 warns inside _mm512_reduce_add_pd's own code).
double lanes_sum(__m512d v) {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, v);
  double total = 0;
  for (double lane : lanes) total += lane;
  return total;
}

// Lanes `By` .. By + 7 of the 16 doubles lo, hi.
template <int By>
inline __attribute__((always_inline)) __m512d shifted(__m512d hi, __m512d lo) {
  const __m512i h = _mm512_castpd_si512(hi);
  return _mm512_castsi512_pd(_mm512_mask_alignr_epi64(h, 0xff, h, _mm512_castpd_si512(lo), By));
}

// whole_rows: as stencil, but the points before and after each row are set to 0 so that every
// cache line of the row is written whole with non-temporal stores (kstencil's zero_row_ends);
// stencil writes the partial first and last line of each row point by point. prefetched: whole
// rows with every stream prefetched as kstencil's stencil_lines_avx512 does (those from memory
// 2 KiB ahead, the two from the L2 512 B ahead) instead of one stream 4 KiB ahead.
enum class Body {
  stencil,
  unaligned,
  pattern,
  no_stores,
  tree,
  whole_rows,
  whole_rows_ymm,
  prefetched
};

// Planes P of row c (plane stride sx_) at once; see the header.
template <int P, Body B>
inline __attribute__((always_inline)) void rows_of_planes(const double* c, double* out) {
  const long n = n_, sx = sx_, sy = sy_;
  constexpr bool whole =
      B == Body::whole_rows || B == Body::whole_rows_ymm || B == Body::prefetched;
  // Whole rows start at the boundary point (N a multiple of 8, rows on cache-line boundaries).
  const long k0 = whole ? 0 : first_aligned(out);
  long k = whole ? 0 : 1;
  for (; k < k0; k++)
    for (int p = 0; p < P; p++) out[k + p * sx] = point(c + p * sx, k);
  const __m512d vc = _mm512_set1_pd(ac), vx = _mm512_set1_pd(ax), vy = _mm512_set1_pd(ay),
                vz = _mm512_set1_pd(az);
  __m512d before[P], at[P], kept = _mm512_setzero_pd();
  for (int p = 0; p < P; p++) {
    before[p] = _mm512_loadu_pd(c + p * sx + k - 8);
    at[p] = _mm512_loadu_pd(c + p * sx + k);
  }
  for (; k + 8 <= (whole ? n : n - 1); k += 8) {
    // Addresses only from the helper: g++ 12 dropped the prefetches of a helper lambda that did
    // nothing but prefetch.
    const auto ahead = [k](const double* line, long bytes) {
      return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(line + k) + bytes);
    };
    if (B == Body::prefetched) {
      // The hint is an immediate operand: one branch per hint, the same each iteration.
      const long far = memory_ahead_;
      switch (memory_hint_) {
        case 0:
          for (int p = 1; p < P; p++) _mm_prefetch(ahead(c + p * sx + sy, far), _MM_HINT_T0);
          _mm_prefetch(ahead(c + P * sx, far), _MM_HINT_T0);
          break;
        case 1:
          for (int p = 1; p < P; p++) _mm_prefetch(ahead(c + p * sx + sy, far), _MM_HINT_T1);
          _mm_prefetch(ahead(c + P * sx, far), _MM_HINT_T1);
          break;
        case 2:
          for (int p = 1; p < P; p++) _mm_prefetch(ahead(c + p * sx + sy, far), _MM_HINT_T2);
          _mm_prefetch(ahead(c + P * sx, far), _MM_HINT_T2);
          break;
        default:
          for (int p = 1; p < P; p++) _mm_prefetch(ahead(c + p * sx + sy, far), _MM_HINT_NTA);
          _mm_prefetch(ahead(c + P * sx, far), _MM_HINT_NTA);
      }
      _mm_prefetch(ahead(c - sx, 512), _MM_HINT_T0);
      _mm_prefetch(ahead(c + sy, 512), _MM_HINT_T0);
    } else {
      _mm_prefetch(ahead(c + P * sx, 4096), _MM_HINT_T0);
    }
    __m512d column[P + 2];
    column[0] = _mm512_loadu_pd(c - sx + k);
    for (int p = 0; p < P; p++) column[p + 1] = at[p];
    column[P + 1] = _mm512_loadu_pd(c + P * sx + k);
    for (int p = 0; p < P; p++) {
      const double* cp = c + p * sx;
      const __m512d after = _mm512_loadu_pd(cp + k + 8);
      const __m512d y_pair =
          _mm512_add_pd(_mm512_loadu_pd(cp + k - sy), _mm512_loadu_pd(cp + k + sy));
      const __m512d slow_pair = _mm512_add_pd(column[p], column[p + 2]);
      if (B == Body::pattern) {
        _mm512_stream_pd(out + p * sx + k, _mm512_add_pd(_mm512_add_pd(slow_pair, y_pair), after));
      } else {
        const __m512d line_pair =
            B == Body::unaligned
                ? _mm512_add_pd(_mm512_loadu_pd(cp + k - 1), _mm512_loadu_pd(cp + k + 1))
                : _mm512_add_pd(shifted<7>(at[p], before[p]), shifted<1>(after, at[p]));
        __m512d sum;
        if (B == Body::tree) {
          sum =
              _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(vc, at[p]), _mm512_mul_pd(vx, slow_pair)),
                            _mm512_add_pd(_mm512_mul_pd(vy, y_pair), _mm512_mul_pd(vz, line_pair)));
        } else {
          sum = _mm512_mul_pd(vc, at[p]);
          sum = _mm512_add_pd(sum, _mm512_mul_pd(vx, slow_pair));
          sum = _mm512_add_pd(sum, _mm512_mul_pd(vy, y_pair));
          sum = _mm512_add_pd(sum, _mm512_mul_pd(vz, line_pair));
        }
        if (whole && k == 0) sum = _mm512_maskz_mov_pd(0xfe, sum);
        if (whole && k + 8 == n) sum = _mm512_maskz_mov_pd(0x7f, sum);
        if (B == Body::no_stores) {
          kept = _mm512_add_pd(kept, sum);
        } else if (B == Body::whole_rows_ymm) {
          _mm256_stream_pd(out + p * sx + k,
                           _mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xf, sum, 0));
          _mm256_stream_pd(out + p * sx + k + 4,
                           _mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xf, sum, 1));
        } else {
          _mm512_stream_pd(out + p * sx + k, sum);
        }
      }
      before[p] = at[p];
      at[p] = after;
    }
  }
  if (B == Body::no_stores) sink_ += lanes_sum(kept);
  for (; k < n - 1 && !whole; k++)
    for (int p = 0; p < P; p++) out[k + p * sx] = point(c + p * sx, k);
}

template <int P, Body B>
void stencil_in_blocks(long block) {
#pragma omp parallel
  {
    const long t = omp_get_thread_num(), threads = omp_get_num_threads();
    const long planes = n_ - 2, first = 1 + planes * t / threads,
               last = 1 + planes * (t + 1) / threads;
    for (long j0 = 1; j0 < n_ - 1; j0 += block) {
      const long j1 = std::min(j0 + block, n_ - 1);
      long i = first;
      for (; i + P <= last; i += P)
        for (long j = j0; j < j1; j++)
          rows_of_planes<P, B>(u_ + i * sx_ + j * sy_, f_ + i * sx_ + j * sy_);
      for (; i < last; i++)
        for (long j = j0; j < j1; j++)
          rows_of_planes<1, B>(u_ + i * sx_ + j * sy_, f_ + i * sx_ + j * sy_);
    }
    _mm_sfence();
  }
}

template <int Parts>
void copy_in_parts() {
  const long size = n_ * sx_, chunk = 16384, items = (size + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
  for (long item = 0; item < items; item++) {
    const long begin = item * chunk, count = std::min(chunk, size - begin);
    const long part = count / (Parts * 8) * 8;
    for (long q = 0; q < part; q += 8)
      for (int p = 0; p < Parts; p++)
        _mm512_stream_pd(f_ + begin + p * part + q, _mm512_load_pd(u_ + begin + p * part + q));
    for (long q = Parts * part; q < count; q++) f_[begin + q] = u_[begin + q];
    _mm_sfence();
  }
}

template <int W>
void copy_with_arithmetic() {
  double total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const long size = n_ * sx_, chunk = size / omp_get_num_threads(),
               first = omp_get_thread_num() * chunk;
    const __m512d m = _mm512_set1_pd(0.999999), d = _mm512_set1_pd(1e-7);
    // Eight named chains, so that they stay in registers.
    __m512d a0 = _mm512_set1_pd(1.0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (long q = 0; q < chunk; q += 8) {
      for (int w = 0; w < W; w++) {
        a0 = _mm512_fmadd_pd(a0, m, d);
        a1 = _mm512_fmadd_pd(a1, m, d);
        a2 = _mm512_fmadd_pd(a2, m, d);
        a3 = _mm512_fmadd_pd(a3, m, d);
        a4 = _mm512_fmadd_pd(a4, m, d);
        a5 = _mm512_fmadd_pd(a5, m, d);
        a6 = _mm512_fmadd_pd(a6, m, d);
        a7 = _mm512_fmadd_pd(a7, m, d);
      }
      _mm512_stream_pd(f_ + first + q, _mm512_load_pd(u_ + first + q));
    }
    _mm_sfence();
    total += lanes_sum(_mm512_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)),
                                     _mm512_add_pd(_mm512_add_pd(a4, a5), _mm512_add_pd(a6, a7))));
  }
  sink_ += total;
}

}  // namespace

int main(int argc, char** argv) {
  n_ = argc > 1 ? std::atol(argv[1]) : 384;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const long block = std::getenv("BLOCK") ? std::atol(std::getenv("BLOCK")) : 32;
  if (std::getenv("PREFETCH_AHEAD")) memory_ahead_ = std::atol(std::getenv("PREFETCH_AHEAD"));
  if (std::getenv("PREFETCH_HINT")) memory_hint_ = std::atoi(std::getenv("PREFETCH_HINT"));
  const std::string keep = std::getenv("KEEP") ? std::getenv("KEEP") : "";
  if (n_ % 8 != 0 || n_ < 16 || rounds < 1 || block < 1) {
    std::fprintf(stderr,
                 "host_planes_probe: N a multiple of 8, N >= 16, rounds >= 1, BLOCK >= 1\n");
    return 2;
  }
  sy_ = n_;
  sx_ = n_ * n_;
  const long size = n_ * sx_;
  const std::size_t bytes = (size * 8 + (2 << 20)) / (2 << 20) * (2 << 20);
  auto* u = static_cast<double*>(std::aligned_alloc(2 << 20, bytes));
  // FOFF=d shifts f by d doubles (a multiple of 8) against u's offset within a page.
  const long f_offset = std::getenv("FOFF") ? std::atol(std::getenv("FOFF")) : 0;
  auto* f = static_cast<double*>(std::aligned_alloc(2 << 20, bytes + (2 << 20))) + f_offset;
  // HUGE=1: both fields on transparent huge pages (as kstencil's fields and copy buffers).
  if (std::getenv("HUGE") && std::atoi(std::getenv("HUGE")) == 1) {
    madvise(u, bytes, MADV_HUGEPAGE);
    madvise(f - f_offset, bytes + (2 << 20), MADV_HUGEPAGE);
  }
#pragma omp parallel for
  for (long i = 0; i < size; i++) {
    u[i] = i % 7 * 0.1 + (i % 13) * 0.01;
    f[i] = 0;
  }
  u_ = u;
  f_ = f;
  std::vector<probe::Variant> variants;
  probe::add_copies(variants, u, f, size);
  probe::add_reference_stencil(variants, u, f, n_, sx_, sy_,
                               [](const double* c, long k) { return point(c, k); });
  const auto add = [&](const std::string& name, std::function<void()> run, bool stencil) {
    if (keep.empty() || keep.find("|" + name + "|") != std::string::npos)
      variants.push_back({name, run, stencil});
  };
  add("copy, 1 part", copy_in_parts<1>, false);
  add("copy, 2 parts", copy_in_parts<2>, false);
  add("copy, 4 parts", copy_in_parts<4>, false);
  add("copy, 8 parts", copy_in_parts<8>, false);
  add("copy + 4 FMA chains", copy_with_arithmetic<4>, false);
  add("copy + 8 FMA chains", copy_with_arithmetic<8>, false);
  add(
      "1 plane", [block] { stencil_in_blocks<1, Body::stencil>(block); }, true);
  add(
      "2 planes", [block] { stencil_in_blocks<2, Body::stencil>(block); }, true);
  add(
      "4 planes", [block] { stencil_in_blocks<4, Body::stencil>(block); }, true);
  add(
      "6 planes", [block] { stencil_in_blocks<6, Body::stencil>(block); }, true);
  add(
      "4 planes, unaligned", [block] { stencil_in_blocks<4, Body::unaligned>(block); }, true);
  add(
      "4 planes, tree", [block] { stencil_in_blocks<4, Body::tree>(block); }, false);
  add(
      "1 plane, tree", [block] { stencil_in_blocks<1, Body::tree>(block); }, false);
  add(
      "4 planes, pattern", [block] { stencil_in_blocks<4, Body::pattern>(block); }, false);
  add(
      "4 planes, whole rows", [block] { stencil_in_blocks<4, Body::whole_rows>(block); }, true);
  add(
      "4 planes, whole rows, ymm stores",
      [block] { stencil_in_blocks<4, Body::whole_rows_ymm>(block); }, true);
  add(
      "1 plane, prefetched", [block] { stencil_in_blocks<1, Body::prefetched>(block); }, true);
  add(
      "4 planes, prefetched", [block] { stencil_in_blocks<4, Body::prefetched>(block); }, true);
  add(
      "6 planes, prefetched", [block] { stencil_in_blocks<6, Body::prefetched>(block); }, true);
  add(
      "4 planes, no stores", [block] { stencil_in_blocks<4, Body::no_stores>(block); }, false);
  std::printf("BLOCK %ld rows; prefetch %ld B ahead, hint %d\n", block, memory_ahead_,
              memory_hint_);
  return probe::time_and_report(variants, rounds, n_, sx_, sy_, f, size) ? 0 : 1;
}
