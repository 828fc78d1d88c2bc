// Stand-alone probe behind the host copy ceiling's size (docs/PERFORMANCE.md, "How it is
// measured"): whether a host copy's rate depends on its buffers' size once they are far beyond
// the last-level cache, and what their first touch costs. Built by the project with
// -DKSTENCIL_BUILD_PROBES=ON (tools/probes/CMakeLists.txt), or alone in tools/probes:
//   g++ -O3 -fopenmp -march=native host_copy_size_probe.cpp -o host_copy_size_probe
//   OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=cores ./host_copy_size_probe 256 2048
// Each argument is a buffer's size in MiB (two buffers each, on transparent huge pages as
// kstencil's fields and copy buffers). Every round copies each size in turn (a static share per
// thread, 64-byte non-temporal stores, as many repeats as make 4 GiB), so that a machine's drift
// goes into all of them; the ratios are medians of per-round ratios to the last size given.
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef __AVX512F__
#error "host_copy_size_probe needs AVX-512 (-march=native on a CPU that has it)"
#endif

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int rounds = 12;
  std::vector<long> mib;
  for (int i = 1; i < argc; ++i) mib.push_back(std::atol(argv[i]));
  if (mib.empty() || *std::min_element(mib.begin(), mib.end()) < 1) {
    std::fprintf(stderr, "host_copy_size_probe: buffer sizes in MiB (each >= 1), e.g. 256 2048\n");
    return 2;
  }
  std::vector<double*> src, dst;
  for (const long m : mib) {
    const std::size_t bytes = static_cast<std::size_t>(m) << 20;
    auto* s = static_cast<double*>(std::aligned_alloc(2 << 20, bytes));
    auto* d = static_cast<double*>(std::aligned_alloc(2 << 20, bytes));
    if (!s || !d) {
      std::fprintf(stderr, "host_copy_size_probe: cannot allocate 2 x %ld MiB\n", m);
      return 1;
    }
    madvise(s, bytes, MADV_HUGEPAGE);
    madvise(d, bytes, MADV_HUGEPAGE);
    const double start = omp_get_wtime();
#pragma omp parallel for
    for (std::size_t i = 0; i < bytes / 8; ++i) {
      s[i] = static_cast<double>(i % 1000003);
      d[i] = 0;
    }
    const double touched = omp_get_wtime() - start;
    std::printf("2 x %5ld MiB: first touch %.2f s (%.2f GB/s)\n", m, touched,
                2.0 * bytes / touched * 1e-9);
    src.push_back(s);
    dst.push_back(d);
  }
  std::vector<std::vector<double>> gbs(mib.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t c = 0; c < mib.size(); ++c) {
      const long n = (mib[c] << 20) / 8;
      const double* s = src[c];
      double* d = dst[c];
      const long repeats = std::max(1L, 4096 / mib[c]);
      const double start = omp_get_wtime();
      for (long r = 0; r < repeats; ++r) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i += 8) _mm512_stream_pd(d + i, _mm512_load_pd(s + i));
        _mm_sfence();
      }
      gbs[c].push_back(2.0 * n * 8 * repeats / (omp_get_wtime() - start) * 1e-9);
    }
  for (std::size_t c = 0; c < mib.size(); ++c) {
    for (long i = 0; i < (mib[c] << 20) / 8; ++i)
      if (dst[c][i] != src[c][i]) {
        std::fprintf(stderr, "host_copy_size_probe: the %ld MiB copy is wrong at %ld\n", mib[c], i);
        return 1;
      }
    std::vector<double> ratio;
    for (int round = 0; round < rounds; ++round) ratio.push_back(gbs[c][round] / gbs.back()[round]);
    std::printf("2 x %5ld MiB: copy %.1f GB/s (median of %d rounds, %.1f-%.1f), %.3f of the last\n",
                mib[c], median(gbs[c]), rounds, *std::min_element(gbs[c].begin(), gbs[c].end()),
                *std::max_element(gbs[c].begin(), gbs[c].end()), median(ratio));
  }
  return 0;
}
