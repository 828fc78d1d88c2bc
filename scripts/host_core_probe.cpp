// Stand-alone probe behind the host note "What one core can do" in docs/PERFORMANCE.md: how many
// cycles a core spends per point of the 7-point line stencil when its data sit in the L2 (no
// memory traffic to overlap), and whether the threads' cores keep their full arithmetic rate
// over time (in a guest two virtual CPUs can share one physical core for a while). x86-64, AVX2.
//   g++ -O3 -fopenmp -ffp-contract=off -march=native scripts/host_core_probe.cpp -o host_core_probe
//   ./host_core_probe incore          # one thread: TSC cycles per point of three loop forms
//   OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads ./host_core_probe share [seconds]
// incore: rows of 1024 doubles, three planes of 10 rows (250 kB, L2-resident), plain stores; the
// forms are kstencil's (neighbours loaded, as the compiler vectorises it), x-neighbours by shuffles
// of the centre vectors, and two rows per pass sharing their y-neighbours. Each form's results are
// compared bitwise with the first. share: every thread counts its FMAs in 10 ms slices; a slice in
// which some thread ran below 3/4 of the median slice rate counts as slow.
#include <immintrin.h>
#include <omp.h>
#include <x86intrin.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe_common.hpp"

namespace {

constexpr long row = 1024, pitch = row + 8, rows = 10, planes = 3;
constexpr long sy = pitch, sz = pitch * rows, total = pitch * rows * planes;

struct Coeffs {
  double c, x, y, z;
};

// Rows 1..8 of the middle plane; points start 4 doubles into each row so that x +- 1 exist.
__attribute__((noinline)) void loaded(const double* __restrict u, double* __restrict f,
                                      const Coeffs a) {
  for (long j = 1; j < rows - 1; j++) {
    const double* c = u + sz + j * sy + 4;
    double* out = f + sz + j * sy + 4;
    for (long q = 0; q < row; q++)
      out[q] = c[q] * a.c + (c[q - 1] + c[q + 1]) * a.x + (c[q - sy] + c[q + sy]) * a.y +
               (c[q - sz] + c[q + sz]) * a.z;
  }
}

__attribute__((noinline)) void shuffled(const double* __restrict u, double* __restrict f,
                                        const Coeffs a) {
  const __m256d vc = _mm256_set1_pd(a.c), vx = _mm256_set1_pd(a.x), vy = _mm256_set1_pd(a.y),
                vz = _mm256_set1_pd(a.z);
  for (long j = 1; j < rows - 1; j++) {
    const double* c = u + sz + j * sy + 4;
    double* out = f + sz + j * sy + 4;
    __m256d prev = _mm256_load_pd(c - 4), cur = _mm256_load_pd(c);
    for (long q = 0; q < row; q += 4) {
      const __m256d next = _mm256_load_pd(c + q + 4);
      const __m256d xm = _mm256_shuffle_pd(_mm256_permute2f128_pd(prev, cur, 0x21), cur, 0x5);
      const __m256d xp = _mm256_shuffle_pd(cur, _mm256_permute2f128_pd(cur, next, 0x21), 0x5);
      __m256d r = _mm256_mul_pd(cur, vc);
      r = _mm256_add_pd(r, _mm256_mul_pd(_mm256_add_pd(xm, xp), vx));
      r = _mm256_add_pd(
          r,
          _mm256_mul_pd(_mm256_add_pd(_mm256_load_pd(c + q - sy), _mm256_load_pd(c + q + sy)), vy));
      r = _mm256_add_pd(
          r,
          _mm256_mul_pd(_mm256_add_pd(_mm256_load_pd(c + q - sz), _mm256_load_pd(c + q + sz)), vz));
      _mm256_store_pd(out + q, r);
      prev = cur;
      cur = next;
    }
  }
}

__attribute__((noinline)) void two_rows(const double* __restrict u, double* __restrict f,
                                        const Coeffs a) {
  const __m256d vc = _mm256_set1_pd(a.c), vx = _mm256_set1_pd(a.x), vy = _mm256_set1_pd(a.y),
                vz = _mm256_set1_pd(a.z);
  const auto x_pair = [](const double* p) {
    return _mm256_add_pd(_mm256_loadu_pd(p - 1), _mm256_loadu_pd(p + 1));
  };
  const auto z_pair = [](const double* p) {
    return _mm256_add_pd(_mm256_load_pd(p - sz), _mm256_load_pd(p + sz));
  };
  for (long j = 1; j < rows - 1; j += 2) {
    const double* c = u + sz + j * sy + 4;
    double* out = f + sz + j * sy + 4;
    for (long q = 0; q < row; q += 4) {
      const __m256d below = _mm256_load_pd(c + q - sy), c0 = _mm256_load_pd(c + q),
                    c1 = _mm256_load_pd(c + q + sy), above = _mm256_load_pd(c + q + 2 * sy);
      __m256d r0 = _mm256_mul_pd(c0, vc), r1 = _mm256_mul_pd(c1, vc);
      r0 = _mm256_add_pd(r0, _mm256_mul_pd(x_pair(c + q), vx));
      r1 = _mm256_add_pd(r1, _mm256_mul_pd(x_pair(c + q + sy), vx));
      r0 = _mm256_add_pd(r0, _mm256_mul_pd(_mm256_add_pd(below, c1), vy));
      r1 = _mm256_add_pd(r1, _mm256_mul_pd(_mm256_add_pd(c0, above), vy));
      r0 = _mm256_add_pd(r0, _mm256_mul_pd(z_pair(c + q), vz));
      r1 = _mm256_add_pd(r1, _mm256_mul_pd(z_pair(c + q + sy), vz));
      _mm256_store_pd(out + q, r0);
      _mm256_store_pd(out + q + sy, r1);
    }
  }
}

int incore() {
  auto* u = static_cast<double*>(std::aligned_alloc(64, total * sizeof(double)));
  auto* reference = static_cast<double*>(std::aligned_alloc(64, total * sizeof(double)));
  auto* f = static_cast<double*>(std::aligned_alloc(64, total * sizeof(double)));
  for (long i = 0; i < total; i++) u[i] = std::sin(i * 0.001) + i * 1e-7;
  const Coeffs a{-6e6, 1e6, 1e6, 1e6};
  std::memset(reference, 0, total * sizeof(double));
  loaded(u, reference, a);
  struct Form {
    const char* name;
    void (*run)(const double*, double*, Coeffs);
  };
  const Form forms[] = {{"neighbours loaded (kstencil)", loaded},
                        {"x-neighbours by shuffles", shuffled},
                        {"two rows share y-neighbours", two_rows}};
  int status = 0;
  for (const Form& form : forms) {
    std::memset(f, 0, total * sizeof(double));
    form.run(u, f, a);
    const bool equal = std::memcmp(f, reference, total * sizeof(double)) == 0;
    status |= !equal;
    std::vector<double> cycles;
    for (int trial = 0; trial < 7; trial++) {
      const unsigned long long start = __rdtsc();
      for (int r = 0; r < 2000; r++) {
        form.run(u, f, a);
        asm volatile("" : : "r"(f) : "memory");
      }
      cycles.push_back(double(__rdtsc() - start) / (2000.0 * (rows - 2) * row));
    }
    std::printf("%-30s %.3f TSC cycles per point (best of 7)%s\n", form.name,
                *std::min_element(cycles.begin(), cycles.end()), equal ? "" : "  RESULTS DIFFER");
  }
  std::free(u);
  std::free(reference);
  std::free(f);
  return status;
}

int share(const double seconds) {
  const double slice = 0.01;
  const int slices = static_cast<int>(seconds / slice);
  const int threads = omp_get_max_threads();
  std::vector<double> rate(static_cast<std::size_t>(threads) * slices);
  const double start = omp_get_wtime();
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    __m256d acc[12];
    for (int i = 0; i < 12; i++) acc[i] = _mm256_set1_pd(1.0 + i * 1e-9);
    const __m256d m = _mm256_set1_pd(0.9999999), b = _mm256_set1_pd(1e-9);
    for (int s = 0; s < slices; s++) {
      const double end = start + (s + 1) * slice;
      long n = 0;
      while (omp_get_wtime() < end) {
        for (int r = 0; r < 1000; r++)
          for (int i = 0; i < 12; i++) acc[i] = _mm256_fmadd_pd(acc[i], m, b);
        n += 12000;
      }
      rate[static_cast<std::size_t>(t) * slices + s] = n / slice;
    }
    __m256d sum = acc[0];
    for (int i = 1; i < 12; i++) sum = _mm256_add_pd(sum, acc[i]);
    volatile double keep = sum[0];  // every chain feeds the result, so none is dropped
    (void)keep;
  }
  const double median = probe::median(rate);
  int slow = 0, episodes = 0, run = 0, longest = 0;
  std::string line;
  for (int s = 0; s < slices; s++) {
    bool is_slow = false;
    for (int t = 0; t < threads; t++)
      is_slow |= rate[static_cast<std::size_t>(t) * slices + s] < 0.75 * median;
    slow += is_slow;
    run = is_slow ? run + 1 : 0;
    episodes += run == 1;
    longest = std::max(longest, run);
    line += is_slow ? '#' : '.';
  }
  for (std::size_t i = 0; i < line.size(); i += 100)
    std::printf("%s\n", line.substr(i, 100).c_str());
  std::printf(
      "%d threads, median %.2f G FMA vectors/s per thread; slow 10 ms slices: %d of %d, in %d "
      "episodes, the longest %d slices\n",
      threads, median / 1e9, slow, slices, episodes, longest);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "incore") return incore();
  if (mode == "share") return share(argc > 2 ? std::atof(argv[2]) : 30.0);
  std::fprintf(stderr, "usage: %s incore | share [seconds]\n", argv[0]);
  return 2;
}
