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
  double gbs = 0;  // (read + write bytes) / median time
  TimingStats timing;
  std::int64_t elements = 0;
  int element_bytes = 0;
};

// Copy bandwidth of a Kokkos RangePolicy copy of `elements` values of `element_bytes` (4 or 8) on
// the default execution space. The copy is verified before it is timed; throws if it is wrong.
CopyBandwidth measure_copy_bandwidth(std::int64_t elements, int element_bytes, int warmup,
                                     int repeats);

}  // namespace kstencil
