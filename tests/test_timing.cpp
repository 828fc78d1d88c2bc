#include <Kokkos_Core.hpp>
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "arch/streams.hpp"
#include "core/exec_space.hpp"
#include "core/report.hpp"
#include "core/timing.hpp"

using namespace kstencil;

namespace {

// Records the names of the Kokkos kernels launched while it is alive, through the tool callbacks.
std::vector<std::string>* launched_kernels = nullptr;

void record_kernel(const char* name, std::uint32_t, std::uint64_t*) {
  launched_kernels->push_back(name);
}

struct KernelRecorder {
  std::vector<std::string> names;
  KernelRecorder() {
    launched_kernels = &names;
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record_kernel);
  }
  ~KernelRecorder() {
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
    launched_kernels = nullptr;
  }
};

using Clock = std::chrono::steady_clock;

double seconds(const Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

struct Fill {
  Kokkos::View<double*> v;
  double value;
  KOKKOS_INLINE_FUNCTION void operator()(int n) const { v(n) = value; }
};

}  // namespace

TEST_CASE("kernels and the copy ceiling are timed in alternating rounds", "[timing]") {
  Kokkos::View<double*> a("a", 1000), b("b", 1000);
  const std::vector<std::function<void()>> launches = {
      [&] {
        Kokkos::parallel_for("test::first", 1000, Fill{a, 1.0});
      },
      [&] {
        Kokkos::parallel_for("test::second", 1000, Fill{b, 2.0});
      }};
  const int warmup = 2, rounds = 3;
  KernelRecorder recorder;
  const SameRunTiming timing = time_with_copy_ceiling(1 << 12, 8, warmup, rounds, launches);

  // Every timed round (and warm-up) runs the first launch, the second, then the copy kernel.
  std::vector<std::string> order;
  for (const auto& name : recorder.names)
    if (name == "test::first" || name == "test::second" || name == "kstencil::copy")
      order.push_back(name);
  std::vector<std::string> expected = {"kstencil::copy"};  // the copy's check before timing
  for (int round = 0; round < warmup + rounds; ++round)
    expected.insert(expected.end(), {"test::first", "test::second", "kstencil::copy"});
  CHECK(order == expected);

  REQUIRE(timing.launches.size() == 2);
  for (const auto& stats : timing.launches) {
    CHECK(stats.samples_s.size() == static_cast<std::size_t>(rounds));
    CHECK(stats.min_s > 0);
    CHECK(stats.min_s <= stats.median_s);
    CHECK(stats.median_s <= stats.max_s);
  }
  CHECK(timing.copy.elements == 1 << 12);
  CHECK(timing.copy.element_bytes == 8);
  CHECK(timing.copy.kernel_gbs > 0);
  CHECK(timing.copy.deep_copy_gbs > 0);
  CHECK(timing.copy.gbs == std::max(timing.copy.kernel_gbs, timing.copy.deep_copy_gbs));
}

TEST_CASE("launches of several steps are timed per step against as many copies", "[timing]") {
  // Each launch stands for 4 steps. What the timer measured of a round lies between the launch's
  // own time and the time from the previous launch's end to the next one's start: a step's time
  // lies between those over 4 on a machine however loaded (not over 1, nor over 16).
  const int steps = 4, rounds = 3;
  std::vector<Clock::time_point> starts, ends;
  KernelRecorder recorder;
  const auto before = Clock::now();
  const SameRunTiming timing =
      time_with_copy_ceiling(1 << 12, 8, 0, rounds, {[&] {
                               starts.push_back(Clock::now());
                               std::this_thread::sleep_for(std::chrono::milliseconds(4));
                               ends.push_back(Clock::now());
                             }},
                             steps);
  const auto after = Clock::now();
  std::int64_t copies = 0;
  for (const auto& name : recorder.names) copies += name == "kstencil::copy";
  CHECK(copies == 1 + rounds * steps);  // the check, then `steps` a round
  REQUIRE(timing.launches.size() == 1);
  const std::vector<double>& samples = timing.launches[0].samples_s;
  REQUIRE(samples.size() == static_cast<std::size_t>(rounds));
  REQUIRE(starts.size() == samples.size());
  for (int r = 0; r < rounds; ++r) {
    const auto from = r > 0 ? ends[r - 1] : before;
    const auto to = r + 1 < rounds ? starts[r + 1] : after;
    CHECK(samples[r] >= seconds(ends[r] - starts[r]) / steps);
    CHECK(samples[r] <= seconds(to - from) / steps);
  }
  CHECK_THROWS_AS(CopyCeiling(1 << 12, 8, 0, 0), std::invalid_argument);
}

TEST_CASE("the copy ceiling alone runs no launches and needs a timed round", "[timing]") {
  const CopyBandwidth copy = measure_copy_bandwidth(1 << 12, 4, 0, 2);
  CHECK(copy.element_bytes == 4);
  CHECK(copy.gbs > 0);
  CHECK_THROWS_AS(time_with_copy_ceiling(1 << 12, 8, 1, 0, {}), std::invalid_argument);
}

TEST_CASE("a copy ceiling timed between a caller's rounds counts only its timed rounds",
          "[timing]") {
  const auto start = Clock::now();
  CopyCeiling ceiling(1 << 12, 4, 2);  // two warm-up rounds, not counted
  CHECK(ceiling.rounds() == 0);
  CHECK_THROWS_AS(ceiling.result(), std::logic_error);
  // Its own wall time grows with every round, warm-up or timed, and stays within the caller's.
  double own = ceiling.seconds();
  CHECK(own > 0);
  for (const bool timed : {true, false, true}) {
    if (timed)
      ceiling.time_round();
    else
      ceiling.warm_up();
    CHECK(ceiling.seconds() > own);
    own = ceiling.seconds();
  }
  CHECK(own <= seconds(Clock::now() - start));
  CHECK(ceiling.rounds() == 2);
  const CopyBandwidth copy = ceiling.result();
  CHECK(copy.elements == 1 << 12);
  CHECK(copy.element_bytes == 4);
  CHECK(copy.gbs == std::max(copy.kernel_gbs, copy.deep_copy_gbs));
  CHECK(copy.kernel_gbs > 0);
}

TEST_CASE("a stop asked after each round ends the timing without figures", "[timing]") {
  Kokkos::View<double*> a("a", 1000);
  int launched = 0, asked = 0;
  const SameRunTiming timing =
      time_with_copy_ceiling(1 << 12, 8, 1, 100000, {[&] {
                               ++launched;
                               Kokkos::parallel_for("test::first", 1000, Fill{a, 1.0});
                             }},
                             1, [&] { return ++asked == 3; });
  CHECK(timing.stopped);
  CHECK(asked == 3);
  CHECK(launched == 3);  // the warm-up and two timed rounds
  CHECK(timing.launches.empty());
  CHECK(timing.copy.gbs == 0);
  CHECK_FALSE(time_with_copy_ceiling(1 << 12, 8, 0, 2, {}, 1, [] { return false; }).stopped);
}

TEST_CASE("a copy beyond doubt slower than the other stops being timed", "[timing]") {
  using detail::beyond_doubt_slower;
  const std::vector<double> fast = {1.0, 1.1, 0.9}, half_speed = {2.0, 2.2, 1.9};
  CHECK(beyond_doubt_slower(half_speed, fast));
  CHECK_FALSE(beyond_doubt_slower(fast, half_speed));
  // Not before 3 rounds of each, however far apart.
  CHECK_FALSE(beyond_doubt_slower({2.0, 2.0}, {1.0, 1.0}));
  CHECK_FALSE(beyond_doubt_slower({2.0, 2.0, 2.0}, {1.0, 1.0}));
  // Its fastest round against the other's median, over a quarter apart: one fast round keeps it.
  CHECK_FALSE(beyond_doubt_slower({2.0, 1.2, 2.0}, {1.0, 1.0, 1.0}));
  CHECK_FALSE(beyond_doubt_slower({1.25, 1.3, 1.4}, {1.0, 1.0, 1.0}));
  CHECK(beyond_doubt_slower({1.26, 1.3, 1.4}, {0.5, 1.0, 3.0}));
  // GPUs' two copies, a few percent apart: both stay.
  CHECK_FALSE(beyond_doubt_slower({1.04, 1.05, 1.03}, {1.0, 1.01, 0.99}));
}

TEST_CASE("a copy ceiling that stops timing a copy still counts every round and reports both",
          "[timing]") {
  CopyCeiling ceiling(1 << 16, 8, 1);
  for (int round = 0; round < 12; ++round) ceiling.time_round();
  CHECK(ceiling.rounds() == 12);
  const CopyBandwidth copy = ceiling.result();
  CHECK(copy.kernel_gbs > 0);
  CHECK(copy.deep_copy_gbs > 0);
  CHECK(copy.gbs == std::max(copy.kernel_gbs, copy.deep_copy_gbs));
}

TEST_CASE("a host's copy ceiling holds at most 8 last-level caches a buffer", "[timing]") {
  constexpr std::int64_t mib = 1 << 20, llc = 32 * mib;
  // 384^3 doubles (the FDTD fields' half at 384^3 is 3 times as many): 8 x 32 MiB of doubles.
  CHECK(copy_ceiling_elements(3 * 56623104, 8, true, llc) == 8 * llc / 8);
  CHECK(copy_ceiling_elements(3 * 56623104, 4, true, llc) == 8 * llc / 4);
  CHECK(copy_ceiling_elements(8 * llc / 8, 8, true, llc) == 8 * llc / 8);
  CHECK(copy_ceiling_elements(1000, 8, true, llc) == 1000);  // smaller: the footprint
  // GPUs keep the footprint (their L2 is a few tens of MiB, their grids' footprint moves it), as
  // does a host whose cache is unknown.
  CHECK(copy_ceiling_elements(3 * 56623104, 8, false, 50 * mib) == 3 * 56623104);
  CHECK(copy_ceiling_elements(3 * 56623104, 8, true, 0) == 3 * 56623104);
}

TEST_CASE("the copy ceiling reports the values it copied", "[timing]") {
  constexpr bool host =
      std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value;
  const std::int64_t elements = 1 << 16;
  CopyCeiling ceiling(elements, 4, 0);
  ceiling.time_round();
  CHECK(ceiling.result().elements ==
        copy_ceiling_elements(elements, 4, host, default_exec_limits().llc_bytes));
  CHECK(ceiling.result().element_bytes == 4);
}

// Copies `lengths` elements with copy(out, in, n) from every start offset within a cache line (16
// elements), in both precisions, into a buffer of `size` elements: the range must hold the input
// and every element around it keep its sentinel.
template <class Copy>
void check_copy_at_every_alignment(const Copy& copy, const std::vector<int>& lengths,
                                   std::size_t size) {
  INFO("non-temporal host stores compiled: " << host_streaming_stores_compiled());
  const auto check = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> in(size), out(size);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i + 1);
    for (int offset = 0; offset < 16; ++offset)
      for (int n : lengths) {
        std::fill(out.begin(), out.end(), T(-1));
        copy(out.data() + offset, static_cast<const T*>(in.data() + offset), n);
        fence_streamed_stores<true>();
        std::size_t wrong = 0;
        for (int i = 0; i < static_cast<int>(out.size()); ++i)
          wrong += out[i] != (i >= offset && i < offset + n ? in[i] : T(-1));
        INFO("offset " << offset << " n " << n << " element bytes " << sizeof(T));
        REQUIRE(wrong == 0);
      }
  };
  check(0.0);
  check(0.0f);
}

TEST_CASE("copy_line_in_parts copies exactly its range at every alignment and length", "[timing]") {
  // The copy ceiling's kernel: lengths with fewer whole lines than parts, exactly as many, and
  // parts of several lines with a remainder.
  check_copy_at_every_alignment(
      [](auto* out, const auto* in, int n) { copy_line_in_parts<true, 4>(out, in, n); },
      {0, 1, 9, 31, 32, 64, 65, 129, 300, 515, 1000}, 1024);
}

TEST_CASE(
    "copy_line_in_parts through one stream copies exactly its range at every alignment and "
    "length",
    "[timing]") {
  // One part: every whole line streamed in turn (the copy without parts); lengths with no, one or
  // several whole lines besides the partial ones at both ends.
  check_copy_at_every_alignment(
      [](auto* out, const auto* in, int n) { copy_line_in_parts<true, 1>(out, in, n); },
      {0, 1, 7, 8, 15, 16, 17, 33, 64, 100}, 256);
}

// in[q], callable where store_line is (host and device): a host lambda would not be on GPU builds.
template <class T>
struct ValueAt {
  const T* in;
  KOKKOS_INLINE_FUNCTION T operator()(const int q) const { return in[q]; }
};

TEST_CASE("store_line writes exactly its range at every alignment and length", "[timing]") {
  // The line kernel's store: whole lines through a buffer of one line, partial ones plainly.
  check_copy_at_every_alignment(
      [](auto* out, const auto* in, int n) {
        store_line<true>(out, n, ValueAt<std::decay_t<decltype(*in)>>{in}, in);
      },
      {0, 1, 7, 8, 15, 16, 17, 33, 64, 100}, 256);
}

TEST_CASE("plain stores (Streaming = false) copy exactly their range", "[timing]") {
  check_copy_at_every_alignment(
      [](auto* out, const auto* in, int n) { copy_line_in_parts<false, 4>(out, in, n); },
      {0, 1, 9, 64, 129}, 256);
}

TEST_CASE("summarize: the median, min and max of hand-counted samples", "[timing]") {
  // Odd count: the middle value after sorting; even count: the mean of the two middle values.
  const TimingStats odd = summarize({0.5, 0.1, 0.3, 0.9, 0.2});
  CHECK(odd.median_s == 0.3);
  CHECK(odd.min_s == 0.1);
  CHECK(odd.max_s == 0.9);
  CHECK(odd.samples_s == std::vector<double>{0.5, 0.1, 0.3, 0.9, 0.2});  // as measured
  const TimingStats even = summarize({4.0, 1.0, 3.0, 2.0});
  CHECK(even.median_s == 2.5);
  CHECK(even.min_s == 1.0);
  CHECK(even.max_s == 4.0);
  const TimingStats none = summarize({});
  CHECK(none.median_s == 0);
  CHECK(none.samples_s.empty());
}

TEST_CASE("the phase clock times its phases one after another, and the report lists them",
          "[timing]") {
  PhaseClock clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto before_first = Clock::now();
  clock.end("first");
  clock.end("second");  // at once: close to 0
  const auto after_second = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  clock.end("third");
  const auto& p = clock.phases();
  REQUIRE(p.size() == 3);
  CHECK(p[0].first == "first");
  CHECK(p[0].second >= 0.030);
  CHECK(p[1].second <= seconds(after_second - before_first));
  CHECK(p[2].second >= 0.010);
  RunReport report("test", default_exec_limits(), 1);
  report.phases(clock);
  const auto& phases = report.summary().at("phases_s");
  std::vector<std::string> names;
  for (const auto& [name, seconds] : phases.items()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"first", "second", "third"});
  CHECK(phases.at("first").get<double>() == p[0].second);
  CHECK(report.console().find("  wall  ") != std::string::npos);
  CHECK(report.console().find("s to this report: first 0.0") != std::string::npos);
}

TEST_CASE("a phase's interleaved work goes to its own phase, which a name ended again adds to",
          "[timing]") {
  const auto start = Clock::now();
  PhaseClock clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto before_copy = Clock::now();
  clock.end("copy");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  clock.end("steps", "copy", 0.030);  // 30 ms of the 50 were the copy's
  const auto after_steps = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  clock.end("copy");
  const auto& p = clock.phases();
  REQUIRE(p.size() == 2);
  CHECK(p[0].first == "copy");
  CHECK(p[1].first == "steps");
  CHECK(p[1].second >= 0.020);
  // The copy's 30 ms left the steps, however long the sleep overran on a loaded machine.
  CHECK(p[1].second <= seconds(after_steps - before_copy) - 0.030);
  CHECK(p[0].second >= 0.020 + 0.030 + 0.010);
  // Nothing is lost or counted twice: the phases add up to the clock's whole time.
  const double total = p[0].second + p[1].second;
  CHECK(total >= 0.080);
  CHECK(total <= seconds(Clock::now() - start));
}
