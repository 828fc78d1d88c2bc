#include "core/timing.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <type_traits>

#include "arch/streams.hpp"
#include "core/exec_space.hpp"
#include "core/huge_pages.hpp"

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

std::int64_t copy_ceiling_elements(const std::int64_t elements, const int element_bytes,
                                   const bool host, const std::int64_t llc_bytes) {
  constexpr std::int64_t llcs_a_buffer = 8;
  if (!host || llc_bytes <= 0 || element_bytes <= 0) return elements;
  return std::min(elements, llcs_a_buffer * llc_bytes / element_bytes);
}

namespace detail {

bool beyond_doubt_slower(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 3 || b.size() < 3) return false;
  return summarize(a).min_s > 1.25 * summarize(b).median_s;
}

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
// The copy as hosts with non-temporal stores run it: chunk elements per work item written through
// copy_line_in_parts (copy_parts streams per item, so one core keeps as many lines in flight as
// it can), with the stores the Laplacian's line kernels write their results with, and fenced at
// the end. With plain stores the copy reads every line it writes first, which a kernel that
// streams does not: such a kernel passed a plain copy's bandwidth (1.03-1.07 of it at 384^3 on the
// 2-core development machine), which is then no ceiling.
template <class T>
struct StreamingCopy {
  static constexpr std::int64_t chunk = 16384;  // 128 KiB of doubles per work item
  static constexpr int copy_parts = 4;          // 2 Xeon cores: 50.8 GB/s against 40.8 for one
  Kokkos::View<T*> dst;
  Kokkos::View<const T*> src;
  std::int64_t elements;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t item) const {
    const std::int64_t begin = item * chunk;
    const int n = static_cast<int>(elements - begin < chunk ? elements - begin : chunk);
    copy_line_in_parts<true, copy_parts>(dst.data() + begin, src.data() + begin, n);
    fence_streamed_stores<true>();
  }
};
// Whether the copy kernel streams: host execution spaces of builds with non-temporal host stores.
constexpr bool streaming_copy =
    host_streaming_stores_compiled() &&
    std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value;

template <class T>
struct CopyMismatches {
  Kokkos::View<const T*> dst, src;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t n, std::int64_t& count) const {
    count += dst(n) != src(n);
  }
};

// Seconds `launch` takes, fenced.
double timed(const std::function<void()>& launch) {
  const auto start = std::chrono::steady_clock::now();
  launch();
  Kokkos::fence();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The copy and deep_copy of `elements` values of T between two arrays, verified once, each timed
// on its own per round (`back_to_back` of each, fenced once).
template <class T>
class TypedCopyCeiling final : public CopyCeiling::Rounds {
 public:
  TypedCopyCeiling(const std::int64_t elements, const int back_to_back)
      : elements_(elements), back_to_back_(back_to_back) {
    // On the same pages as the fields (allocate_field), so that the ceiling and the kernels meet
    // the same TLB; the fill below and the first copy touch them first.
    src_ = allocate_on_huge_pages<View>("copy_src", elements);
    dst_ = allocate_on_huge_pages<View>("copy_dst", elements);
    Kokkos::parallel_for("kstencil::copy_fill", Policy(0, elements), CopyFill<T>{src_});
    copy();
    check("copy-bandwidth kernel");
    Kokkos::deep_copy(dst_, T(0));  // so that deep_copy's check below sees its own values
    deep_copy();
    check("copy-bandwidth deep_copy");
  }
  // A copy beyond doubt slower than the other is timed no more: it cannot be the ceiling, and a
  // host's deep_copy took two thirds of every round (docs/PERFORMANCE.md, "How it is measured").
  void time_round(const bool keep) override {
    Kokkos::Profiling::pushRegion("kstencil::copy_bandwidth");
    const auto repeated = [&](const auto& what) {
      return timed([&] {
               for (int n = 0; n < back_to_back_; ++n) what();
             }) /
             back_to_back_;
    };
    // Decided after 3 rounds and again whenever the samples have doubled: deciding every round
    // sorted every sample each round, a time quadratic in the rounds.
    const std::size_t samples = copy_samples_.size() + deep_copy_samples_.size();
    if (samples >= next_decision_) {
      time_copy_ = !beyond_doubt_slower(copy_samples_, deep_copy_samples_);
      time_deep_copy_ = !beyond_doubt_slower(deep_copy_samples_, copy_samples_);
      next_decision_ = std::max<std::size_t>(6, 2 * samples);
    }
    const bool time_copy = time_copy_, time_deep_copy = time_deep_copy_;
    if (time_copy) {
      const double s = repeated([&] { copy(); });
      if (keep) copy_samples_.push_back(s);
    }
    if (time_deep_copy) {
      const double s = repeated([&] { deep_copy(); });
      if (keep) deep_copy_samples_.push_back(s);
    }
    Kokkos::Profiling::popRegion();
    rounds_ += keep;
  }
  CopyBandwidth result() const override {
    const double bytes = 2.0 * elements_ * sizeof(T);
    CopyBandwidth ceiling;
    ceiling.kernel_gbs = bytes / summarize(copy_samples_).median_s * 1e-9;
    ceiling.deep_copy_gbs = bytes / summarize(deep_copy_samples_).median_s * 1e-9;
    ceiling.gbs = std::max(ceiling.kernel_gbs, ceiling.deep_copy_gbs);
    ceiling.elements = elements_;
    ceiling.element_bytes = sizeof(T);
    return ceiling;
  }
  std::size_t rounds() const override { return rounds_; }

 private:
  using View = Kokkos::View<T*>;
  using Policy = Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>;
  std::int64_t elements_;
  int back_to_back_;
  View src_, dst_;
  std::vector<double> copy_samples_, deep_copy_samples_;
  std::size_t rounds_ = 0;
  bool time_copy_ = true, time_deep_copy_ = true;
  std::size_t next_decision_ = 6;  // samples of both copies at which to decide again

  void copy() const {
    if constexpr (streaming_copy) {
      const std::int64_t items =
          (elements_ + StreamingCopy<T>::chunk - 1) / StreamingCopy<T>::chunk;
      Kokkos::parallel_for("kstencil::copy", Policy(0, items),
                           StreamingCopy<T>{dst_, src_, elements_});
    } else {
      Kokkos::parallel_for("kstencil::copy", Policy(0, elements_), Copy<T>{dst_, src_});
    }
  }
  // Queued on the default instance without a fence where it runs asynchronously (GPUs).
  void deep_copy() const { Kokkos::deep_copy(Kokkos::DefaultExecutionSpace(), dst_, src_); }
  void check(const char* what) const {
    std::int64_t wrong = 0;
    Kokkos::parallel_reduce("kstencil::copy_check", Policy(0, elements_),
                            CopyMismatches<T>{dst_, src_}, wrong);
    if (wrong != 0) throw std::runtime_error(std::string(what) + " produced wrong values");
  }
};

}  // namespace detail

CopyCeiling::CopyCeiling(const std::int64_t elements, const int element_bytes, const int warmup,
                         const int back_to_back) {
  if (back_to_back < 1) throw std::invalid_argument("a copy round needs at least one copy");
  constexpr bool host =
      std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value;
  const std::int64_t copied = copy_ceiling_elements(elements, element_bytes, host,
                                                    host ? default_exec_limits().llc_bytes : 0);
  seconds_ = detail::timed([&] {
    if (element_bytes == 4)
      rounds_ = std::make_unique<detail::TypedCopyCeiling<float>>(copied, back_to_back);
    else
      rounds_ = std::make_unique<detail::TypedCopyCeiling<double>>(copied, back_to_back);
  });
  for (int round = 0; round < warmup; ++round) warm_up();
}
CopyCeiling::~CopyCeiling() = default;
void CopyCeiling::time_round() {
  seconds_ += detail::timed([&] { rounds_->time_round(true); });
}
void CopyCeiling::warm_up() {
  seconds_ += detail::timed([&] { rounds_->time_round(false); });
}
std::size_t CopyCeiling::rounds() const {
  return rounds_->rounds();
}
CopyBandwidth CopyCeiling::result() const {
  if (rounds_->rounds() == 0) throw std::logic_error("no copy round timed");
  return rounds_->result();
}

SameRunTiming time_with_copy_ceiling(std::int64_t elements, int element_bytes, int warmup,
                                     int rounds, const std::vector<std::function<void()>>& launches,
                                     const int per_launch, const std::function<bool()>& stop) {
  if (rounds < 1) throw std::invalid_argument("timing needs at least one round");
  CopyCeiling ceiling(elements, element_bytes, 0, per_launch);
  std::vector<std::vector<double>> samples(launches.size());
  SameRunTiming result;
  for (int round = -warmup; round < rounds; ++round) {
    for (std::size_t l = 0; l < launches.size(); ++l) {
      const double seconds = detail::timed(launches[l]) / per_launch;
      if (round >= 0) samples[l].push_back(seconds);
    }
    if (round >= 0)
      ceiling.time_round();
    else
      ceiling.warm_up();
    if (stop && stop()) {
      result.stopped = true;
      return result;
    }
  }
  for (auto& s : samples) result.launches.push_back(summarize(std::move(s)));
  result.copy = ceiling.result();
  return result;
}

CopyBandwidth measure_copy_bandwidth(std::int64_t elements, int element_bytes, int warmup,
                                     int repeats) {
  return time_with_copy_ceiling(elements, element_bytes, warmup, repeats, {}).copy;
}

}  // namespace kstencil
