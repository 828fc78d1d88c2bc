#pragma once
// Timing of fenced kernel launches and the same-run copy-bandwidth ceiling.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kstencil {

struct TimingStats {
  std::vector<double> samples_s;
  double median_s = 0, min_s = 0, max_s = 0;
};

TimingStats summarize(std::vector<double> samples_s);

// Runs `launch` warmup times, then `repeats` times, each fenced and timed on its own.
template <class Launch>
TimingStats time_launches(int warmup, int repeats, Launch&& launch) {
  for (int w = 0; w < warmup; ++w) launch();
  Kokkos::fence();
  std::vector<double> samples;
  samples.reserve(repeats);
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    launch();
    Kokkos::fence();
    samples.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return summarize(std::move(samples));
}

struct CopyBandwidth {
  double gbs = 0;            // the ceiling: the faster of the two copies below
  double kernel_gbs = 0;     // Kokkos parallel_for copy, (read + write bytes) / median time
  double deep_copy_gbs = 0;  // Kokkos::deep_copy (cudaMemcpy device-to-device on CUDA)
  TimingStats timing;        // of the kernel copy
  std::int64_t elements = 0;
  int element_bytes = 0;
};

// Copy bandwidth for `elements` values of `element_bytes` (4 or 8) on the default execution space,
// as a Kokkos RangePolicy kernel and as Kokkos::deep_copy (the vendor memcpy on GPUs); the ceiling
// is the faster. Both copies are verified before they are timed; throws if one is wrong.
CopyBandwidth measure_copy_bandwidth(std::int64_t elements, int element_bytes, int warmup,
                                     int repeats);

}  // namespace kstencil
