#include "core/timing.hpp"

#include <stdexcept>

namespace kstencil {

TimingStats summarize(std::vector<double> samples_s) {
  TimingStats stats;
  stats.samples_s = samples_s;
  if (samples_s.empty()) return stats;
  std::sort(samples_s.begin(), samples_s.end());
  const std::size_t n = samples_s.size();
  stats.median_s = n % 2 ? samples_s[n / 2] : 0.5 * (samples_s[n / 2 - 1] + samples_s[n / 2]);
  stats.min_s = samples_s.front();
  stats.max_s = samples_s.back();
  return stats;
}

namespace detail {

// Functors rather than lambdas: CUDA forbids device lambdas inside host lambdas.
template <class T>
struct CopyFill {
  Kokkos::View<T*> src;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t n) const {
    src(n) = static_cast<T>(n % 1000003);
  }
};
template <class T>
struct Copy {
  Kokkos::View<T*> dst;
  Kokkos::View<const T*> src;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t n) const { dst(n) = src(n); }
};
template <class T>
struct CopyMismatches {
  Kokkos::View<const T*> dst, src;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t n, std::int64_t& count) const {
    count += dst(n) != src(n);
  }
};

template <class T>
CopyBandwidth copy_bandwidth(std::int64_t elements, int warmup, int repeats) {
  using View = Kokkos::View<T*>;
  View src(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_src"), elements);
  View dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_dst"), elements);
  using Policy = Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for("kstencil::copy_fill", Policy(0, elements), CopyFill<T>{src});
  const auto copy = [&] {
    Kokkos::parallel_for("kstencil::copy", Policy(0, elements), Copy<T>{dst, src});
  };
  const auto deep_copy = [&] { Kokkos::deep_copy(dst, src); };
  const auto check = [&](const char* what) {
    std::int64_t wrong = 0;
    Kokkos::parallel_reduce("kstencil::copy_check", Policy(0, elements),
                            CopyMismatches<T>{dst, src}, wrong);
    if (wrong != 0) throw std::runtime_error(std::string(what) + " produced wrong values");
    Kokkos::deep_copy(dst, T(0));
  };
  copy();
  check("copy-bandwidth kernel");
  deep_copy();
  check("copy-bandwidth deep_copy");

  Kokkos::Profiling::pushRegion("kstencil::copy_bandwidth");
  CopyBandwidth result;
  const double bytes = 2.0 * elements * sizeof(T);
  result.timing = time_launches(warmup, repeats, copy);
  result.kernel_gbs = bytes / result.timing.median_s * 1e-9;
  result.deep_copy_gbs = bytes / time_launches(warmup, repeats, deep_copy).median_s * 1e-9;
  Kokkos::Profiling::popRegion();
  result.elements = elements;
  result.element_bytes = sizeof(T);
  result.gbs = std::max(result.kernel_gbs, result.deep_copy_gbs);
  return result;
}

}  // namespace detail

CopyBandwidth measure_copy_bandwidth(std::int64_t elements, int element_bytes, int warmup,
                                     int repeats) {
  return element_bytes == 4 ? detail::copy_bandwidth<float>(elements, warmup, repeats)
                            : detail::copy_bandwidth<double>(elements, warmup, repeats);
}

}  // namespace kstencil
