// Stand-alone probe behind FDTD's host row kernel (docs/PERFORMANCE.md, "FDTD on hosts"): why one
// component a loop stays near 0.7 of the copy on a 2-core Emerald Rapids VM, and what the three
// components in one loop with prefetches reach. N^3 cells of double fields (N + 1 nodes a row, as
// kstencil's), LayoutRight; each thread sweeps its share of the planes in blocks of BLOCK rows
// (environment, default N: whole planes), E then H as a step. Built by the project with
// -DKSTENCIL_BUILD_PROBES=ON (tools/probes/CMakeLists.txt), or alone in tools/probes:
//   g++ -O3 -fopenmp -ffp-contract=off -march=native host_fdtd_probe.cpp -o host_fdtd_probe
//   OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=cores ./host_fdtd_probe [N [rounds]]
// Variants: "components" (kstencil's row before: one loop per component), "fused" (the three in
// one loop), "fused, prefetched" (kstencil's e_row / h_row: each stream from memory prefetched
// AHEAD bytes on, default 2048, per cache line), "no plane/row/unit neighbours" and "no
// neighbours" (the fused loop with those neighbours' offsets set to 0: not FDTD, the cost of
// their loads), "streams" (the six arrays' 9 streams a half step, aligned, no neighbours), and
// the copies: kstencil's ceiling (4 parts, non-temporal stores) and one stream. The three FDTD
// variants are compared bitwise after two steps from the same fields (exit 1 if any differ);
// figures count 18 x 8 B per cell and step, 2 x 8 B per copied value; ratios are medians of
// per-round ratios to the 4-part copy.
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#ifndef __AVX512F__
#error "host_fdtd_probe needs AVX-512 (-march=native on a CPU that has it)"
#endif

namespace {

long n_, row_, plane_, block_, ahead_ = 2048;
double *ex_, *ey_, *ez_, *hx_, *hy_, *hz_;
constexpr double ca = 1.0, cb = 0.3, db = 0.3;  // stable: c dt / h = 0.3 < 1 / sqrt(3)
constexpr double idx = 1.0, idy = 1.1, idz = 1.2;

// Each thread's share of the planes [lo, hi), in blocks of block_ rows: row(offset, cells).
template <class Row>
void sweep(const Row& row, const long lo, const long hi) {
#pragma omp parallel
  {
    const long t = omp_get_thread_num(), threads = omp_get_num_threads();
    const long first = lo + (hi - lo) * t / threads, last = lo + (hi - lo) * (t + 1) / threads;
    for (long jb = lo; jb < hi; jb += block_)
      for (long i = first; i < last; ++i)
        for (long j = jb; j < std::min(jb + block_, hi); ++j)
          row(i * plane_ + j * row_ + lo, hi - lo);
  }
}

void prefetch(const double* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p) + ahead_, _MM_HINT_T0);
}

// One component: e += (a - a[-da]) ia - (b - b[-db]) ib, h -= ... (kstencil's e_line, h_line).
inline void e_line(double* __restrict e, const double* __restrict a, const long da, const double ia,
                   const double* __restrict b, const long dbs, const double ib, const long n) {
  for (long q = 0; q < n; ++q)
    e[q] = ca * e[q] + cb * ((a[q] - a[q - da]) * ia - (b[q] - b[q - dbs]) * ib);
}
inline void h_line(double* __restrict h, const double* __restrict a, const long da, const double ia,
                   const double* __restrict b, const long dbs, const double ib, const long n) {
  for (long q = 0; q < n; ++q)
    h[q] = h[q] - db * ((a[q + da] - a[q]) * ia - (b[q + dbs] - b[q]) * ib);
}

// The three components over [begin, end); sp, sr, su: the plane, row and unit neighbours' offsets
// (0 drops that neighbour's loads).
inline void e_cells(double* __restrict x, double* __restrict y, double* __restrict z,
                    const double* __restrict a, const double* __restrict b,
                    const double* __restrict c, const long sp, const long sr, const long su,
                    const long begin, const long end) {
  for (long q = begin; q < end; ++q) {
    x[q] = ca * x[q] + cb * ((c[q] - c[q - sr]) * idy - (b[q] - b[q - su]) * idz);
    y[q] = ca * y[q] + cb * ((a[q] - a[q - su]) * idz - (c[q] - c[q - sp]) * idx);
    z[q] = ca * z[q] + cb * ((b[q] - b[q - sp]) * idx - (a[q] - a[q - sr]) * idy);
  }
}
inline void h_cells(double* __restrict x, double* __restrict y, double* __restrict z,
                    const double* __restrict a, const double* __restrict b,
                    const double* __restrict c, const long sp, const long sr, const long su,
                    const long begin, const long end) {
  for (long q = begin; q < end; ++q) {
    x[q] = x[q] - db * ((c[q + sr] - c[q]) * idy - (b[q + su] - b[q]) * idz);
    y[q] = y[q] - db * ((a[q + su] - a[q]) * idz - (c[q + sp] - c[q]) * idx);
    z[q] = z[q] - db * ((b[q + sp] - b[q]) * idx - (a[q + sr] - a[q]) * idy);
  }
}

void step_components() {
  sweep(
      [](const long o, const long n) {
        e_line(ex_ + o, hz_ + o, row_, idy, hy_ + o, 1, idz, n);
        e_line(ey_ + o, hx_ + o, 1, idz, hz_ + o, plane_, idx, n);
        e_line(ez_ + o, hy_ + o, plane_, idx, hx_ + o, row_, idy, n);
      },
      1, n_);
  sweep(
      [](const long o, const long n) {
        h_line(hx_ + o, ez_ + o, row_, idy, ey_ + o, 1, idz, n);
        h_line(hy_ + o, ex_ + o, 1, idz, ez_ + o, plane_, idx, n);
        h_line(hz_ + o, ey_ + o, plane_, idx, ex_ + o, row_, idy, n);
      },
      0, n_ - 1);
}

// Drop: 1 plane, 2 row, 4 unit neighbours left out; Prefetched: per cache line of the row, the
// streams from memory AHEAD bytes on (E: all six here; H: H here, Ex here, Ey and Ez a plane on).
template <bool Prefetched, int Drop>
void step_fused() {
  const long sp = Drop & 1 ? 0 : plane_, sr = Drop & 2 ? 0 : row_, su = Drop & 4 ? 0 : 1;
  sweep(
      [=](const long o, const long n) {
        long q0 = 0;
        if (Prefetched)
          for (; q0 + 8 <= n; q0 += 8) {
            for (double* p : {ex_, ey_, ez_, hx_, hy_, hz_}) prefetch(p + o + q0);
            e_cells(ex_ + o, ey_ + o, ez_ + o, hx_ + o, hy_ + o, hz_ + o, sp, sr, su, q0, q0 + 8);
          }
        e_cells(ex_ + o, ey_ + o, ez_ + o, hx_ + o, hy_ + o, hz_ + o, sp, sr, su, q0, n);
      },
      1, n_);
  sweep(
      [=](const long o, const long n) {
        long q0 = 0;
        if (Prefetched)
          for (; q0 + 8 <= n; q0 += 8) {
            for (double* p : {hx_, hy_, hz_, ex_}) prefetch(p + o + q0);
            for (double* p : {ey_, ez_}) prefetch(p + o + q0 + plane_);
            h_cells(hx_ + o, hy_ + o, hz_ + o, ex_ + o, ey_ + o, ez_ + o, sp, sr, su, q0, q0 + 8);
          }
        h_cells(hx_ + o, hy_ + o, hz_ + o, ex_ + o, ey_ + o, ez_ + o, sp, sr, su, q0, n);
      },
      0, n_ - 1);
}

struct Variant {
  std::string name;
  std::function<void()> run;
  double bytes;
  bool fdtd;  // compared bitwise with "components"
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  n_ = argc > 1 ? std::atol(argv[1]) : 256;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  block_ = std::getenv("BLOCK") ? std::atol(std::getenv("BLOCK")) : n_;
  if (std::getenv("AHEAD")) ahead_ = std::atol(std::getenv("AHEAD"));
  if (n_ < 16 || rounds < 1 || block_ < 1) {
    std::fprintf(stderr, "host_fdtd_probe: N >= 16, rounds >= 1, BLOCK >= 1\n");
    return 2;
  }
  row_ = n_ + 1;
  plane_ = row_ * row_;
  const long size = plane_ * row_;
  const std::size_t bytes = (size * 8 + (2 << 20)) / (2 << 20) * (2 << 20);
  std::vector<double*> fields;
  for (double** f : {&ex_, &ey_, &ez_, &hx_, &hy_, &hz_}) {
    *f = static_cast<double*>(std::aligned_alloc(2 << 20, bytes));
    madvise(*f, bytes, MADV_HUGEPAGE);  // as kstencil's fields
    fields.push_back(*f);
  }
  double* from = static_cast<double*>(std::aligned_alloc(2 << 20, bytes));
  double* to = static_cast<double*>(std::aligned_alloc(2 << 20, bytes));
  madvise(from, bytes, MADV_HUGEPAGE);
  madvise(to, bytes, MADV_HUGEPAGE);
  const auto initial = [&] {
#pragma omp parallel for
    for (long p = 0; p < size; ++p) {
      for (int c = 0; c < 6; ++c) fields[c][p] = p * (c + 3) % 17 * 0.01;
      from[p] = p % 7;
      to[p] = 0;
    }
  };
  initial();
  const long items = size / 16384;  // kstencil's copy: 16384 values a work item, 4 parts
  const double step_bytes = 18.0 * n_ * n_ * n_ * 8, copy_bytes = 2.0 * items * 16384 * 8;
  std::vector<Variant> variants = {
      {"copy, 4 parts",
       [=] {
#pragma omp parallel for
         for (long item = 0; item < items; ++item)
           for (long l = 0; l < 4096; l += 8)
             for (long part = 0; part < 4; ++part) {
               const long at = item * 16384 + part * 4096 + l;
               _mm512_stream_pd(to + at, _mm512_load_pd(from + at));
             }
         _mm_sfence();
       },
       copy_bytes, false},
      {"copy, 1 stream",
       [=] {
#pragma omp parallel for
         for (long p = 0; p < items * 16384; p += 8)
           _mm512_stream_pd(to + p, _mm512_load_pd(from + p));
         _mm_sfence();
       },
       copy_bytes, false},
      {"streams, no neighbours",
       [=] {
         for (int half = 0; half < 2; ++half) {
           double *x = half ? hx_ : ex_, *y = half ? hy_ : ey_, *z = half ? hz_ : ez_;
           const double *a = half ? ex_ : hx_, *b = half ? ey_ : hy_, *c = half ? ez_ : hz_;
#pragma omp parallel for
           for (long p = 0; p < size - 8; p += 8) {
             const __m512d va = _mm512_load_pd(a + p), vb = _mm512_load_pd(b + p),
                           vc = _mm512_load_pd(c + p), k = _mm512_set1_pd(cb);
             _mm512_store_pd(x + p, _mm512_add_pd(_mm512_load_pd(x + p),
                                                  _mm512_mul_pd(k, _mm512_sub_pd(vc, vb))));
             _mm512_store_pd(y + p, _mm512_add_pd(_mm512_load_pd(y + p),
                                                  _mm512_mul_pd(k, _mm512_sub_pd(va, vc))));
             _mm512_store_pd(z + p, _mm512_add_pd(_mm512_load_pd(z + p),
                                                  _mm512_mul_pd(k, _mm512_sub_pd(vb, va))));
           }
         }
       },
       18.0 * size * 8, false},
      {"components", step_components, step_bytes, true},
      {"fused", step_fused<false, 0>, step_bytes, true},
      {"fused, prefetched", step_fused<true, 0>, step_bytes, true},
      {"no plane neighbours", step_fused<false, 1>, step_bytes, false},
      {"no row neighbours", step_fused<false, 2>, step_bytes, false},
      {"no unit neighbours", step_fused<false, 4>, step_bytes, false},
      {"no neighbours", step_fused<false, 7>, step_bytes, false},
  };
  // Two steps of each FDTD variant from the same fields, bitwise against "components".
  std::vector<std::vector<double>> reference;
  bool all_equal = true;
  for (const Variant& v : variants) {
    if (!v.fdtd) continue;
    initial();
    v.run();
    v.run();
    std::vector<std::vector<double>> state;
    for (double* f : fields) state.emplace_back(f, f + size);
    if (reference.empty()) reference = state;
    if (state != reference) {
      std::printf("%s: fields differ from components'\n", v.name.c_str());
      all_equal = false;
    }
  }
  initial();
  std::vector<std::vector<double>> gbs(variants.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const double start = omp_get_wtime();
      variants[v].run();
      gbs[v].push_back(variants[v].bytes / (omp_get_wtime() - start) * 1e-9);
    }
  std::printf("N %ld, %d threads, BLOCK %ld rows, prefetch %ld B ahead, %d rounds\n", n_,
              omp_get_max_threads(), block_, ahead_, rounds);
  std::printf("%-24s %8s %10s\n", "variant", "GB/s", "/4 parts");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::vector<double> ratio;
    for (int round = 0; round < rounds; ++round) ratio.push_back(gbs[v][round] / gbs[0][round]);
    std::printf("%-24s %8.1f %10.3f\n", variants[v].name.c_str(), median(gbs[v]), median(ratio));
  }
  return all_equal ? 0 : 1;
}
