// Probe of kstencil's own host rows (stencil_lines, arch/streams.hpp) inside one core: how many
// points a second a thread's rows of 4 planes (and of 1) update when their input stays in the L2,
// so that memory is out of the way. Behind the note on the rows' store order in docs/PERFORMANCE.md
// (Laplacian on hosts). Built with the project when -DKSTENCIL_BUILD_PROBES=ON (it includes
// kstencil's headers and Kokkos'), or alone from the repository root:
//   g++ -O3 -march=native -ffp-contract=off -fopenmp -std=c++17 -Isrc -I<kokkos>/include
//     tools/probes/host_rows_probe.cpp -o host_rows_probe
//   OMP_NUM_THREADS=1 ./host_rows_probe [points_per_row [shift [rounds]]]
// Each thread updates R = 16 rows of S planes (the Laplacian's host work item at 512^3: rows of
// 510 points plus their ends) over and over from one input block (S + 2 planes of 18 rows), with
// non-temporal stores into an output that moves on through 64 blocks (so the stores go to memory,
// as in a run). shift: doubles by which the output's offset within a 4 KiB page differs from the
// input's (kstencil's fields: 0, all of them at the same offset). Rows of 512 doubles put every
// plane's and row's line at one L1 set; 526 points (528 a row) spread them.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "arch/streams.hpp"

#ifndef __AVX512F__
#error "host_rows_probe needs AVX-512 (-march=native on a CPU that has it)"
#endif

namespace {

constexpr int rows = 16, blocks = 64;

// Points a second over `rounds` passes of the work item's rows, S planes at a time.
template <int S>
double rows_rate(const int n, const long shift, const int rounds) {
  using kstencil::RowEnds;
  const std::ptrdiff_t sy = n + 2, ss = sy * (rows + 2), block = ss * (S + 2);
  auto* in = static_cast<double*>(std::aligned_alloc(4096, sizeof(double) * block));
  const std::size_t out_doubles = static_cast<std::size_t>(block) * blocks + 4096;
  auto* out_buffer = static_cast<double*>(std::aligned_alloc(4096, sizeof(double) * out_doubles));
  for (std::ptrdiff_t i = 0; i < block; ++i) in[i] = 0.001 * static_cast<double>(i % 97);
  std::fill(out_buffer, out_buffer + out_doubles, 0.0);
  double* out = out_buffer + shift;
  const kstencil::StencilPoint<double> point{
      kstencil::StencilCoeffs<double>::from_spacing({0.001, 0.0011, 0.0012})};
  const double start = omp_get_wtime();
  for (int r = 0; r < rounds; ++r) {
    double* to = out + (r % blocks) * block;
    for (int j = 0; j < rows; ++j) {
      const std::ptrdiff_t first = ss + (j + 1) * sy + 1;  // plane 1, row j + 1, point 1
      kstencil::stencil_lines<true, S, Kokkos::LayoutRight>(in + first, to + first, n, S, ss, sy,
                                                            point, RowEnds::zero, 0);
    }
    kstencil::fence_streamed_stores<true>();
  }
  const double seconds = omp_get_wtime() - start;
  std::free(in);
  std::free(out_buffer);
  return static_cast<double>(rounds) * rows * S * n / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 510;
  const long shift = argc > 2 ? std::atol(argv[2]) : 0;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 4000;
  if ((n + 2) % 8 != 0 || n < 14 || shift < 0 || shift > 4096 || rounds < 1) {
    std::fprintf(stderr,
                 "host_rows_probe: points_per_row + 2 a multiple of 8 and >= 16, 0 <= shift <= "
                 "4096, rounds >= 1\n");
    return 2;
  }
#pragma omp parallel
  {
    const double four = rows_rate<4>(n, shift, rounds), one = rows_rate<1>(n, shift, 4 * rounds);
#pragma omp critical
    std::printf(
        "thread %d: %d points a row, shift %ld doubles: 4 planes %.2f, 1 plane %.2f Gpoints/s\n",
        omp_get_thread_num(), n, shift, four * 1e-9, one * 1e-9);
  }
  return 0;
}
