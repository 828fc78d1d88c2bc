#pragma once
// Timing of fenced kernel launches and the same-run copy-bandwidth ceiling.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kstencil {

struct TimingStats {
  std::vector<double> samples_s;
  double median_s = 0, min_s = 0, max_s = 0;
};

TimingStats summarize(std::vector<double> samples_s);

struct CopyBandwidth {
  double gbs = 0;             // the ceiling: the faster of the two copies below
  double kernel_gbs = 0;      // Kokkos parallel_for copy, (read + write bytes) / median time;
                              // non-temporal stores on hosts that have them (copy_line)
  double deep_copy_gbs = 0;   // Kokkos::deep_copy (cudaMemcpy device-to-device on CUDA)
  std::int64_t elements = 0;  // a buffer's (copy_ceiling_elements)
  int element_bytes = 0;
};
// Both buffers' bytes.
inline double copy_bytes(const CopyBandwidth& copy) {
  return 2.0 * static_cast<double>(copy.elements) * copy.element_bytes;
}

// Values a buffer of the copy ceiling holds for kernels whose footprint is two buffers of
// `elements`: as many, but on hosts with a known last-level cache at most 8 times it a buffer.
// Beyond that a host copy's rate no longer depends on its size, and the buffers' first touch is
// a run's largest cost beside its steps on VMs (docs/PERFORMANCE.md, "How it is measured").
std::int64_t copy_ceiling_elements(std::int64_t elements, int element_bytes, bool host,
                                   std::int64_t llc_bytes);

// The copy ceiling of CopyBandwidth timed in rounds between a caller's own timed work, so that a
// machine's bandwidth drift goes into both: a copy kernel and deep_copy of `elements` values of
// `element_bytes` (4 or 8) a buffer, at most copy_ceiling_elements' on this machine, verified once
// (throws if wrong), after `warmup` untimed rounds.
class CopyCeiling {
 public:
  // `back_to_back` > 1: a round times that many copies queued one after another, fenced once (as
  // work whose launches the host queues ahead), and counts their mean.
  CopyCeiling(std::int64_t elements, int element_bytes, int warmup, int back_to_back = 1);
  ~CopyCeiling();
  CopyCeiling(const CopyCeiling&) = delete;
  CopyCeiling& operator=(const CopyCeiling&) = delete;
  void time_round();             // one round of each copy still timed, fenced, timed on its own
  void warm_up();                // one untimed round
  std::size_t rounds() const;    // timed so far
  CopyBandwidth result() const;  // medians of the rounds timed; throws if none
  // Wall time spent in the ceiling so far: its buffers' allocation and first touch, the copies'
  // verification, warm-up and every round (what a run's report counts apart from its own work).
  double seconds() const { return seconds_; }

  struct Rounds {
    virtual ~Rounds() = default;
    virtual void time_round(bool keep) = 0;
    virtual CopyBandwidth result() const = 0;
    virtual std::size_t rounds() const = 0;
  };

 private:
  std::unique_ptr<Rounds> rounds_;
  double seconds_ = 0;
};

// Timings of kernel launches together with the copy ceiling of the same run.
struct SameRunTiming {
  std::vector<TimingStats> launches;  // one per launch, in the order given
  CopyBandwidth copy;
  bool stopped = false;  // `stop` said so: no figures (launches empty, copy zero)
};

// Copy bandwidth for `elements` values of `element_bytes` (4 or 8) on the default execution space,
// as a Kokkos RangePolicy kernel (with non-temporal stores on x86 hosts with AVX, as the
// Laplacian's line kernels store) and as Kokkos::deep_copy (the vendor memcpy on GPUs); the ceiling
// is the faster. Both copies are verified before they are timed; throws if one is wrong. `launches`
// are timed in the same rounds: every round runs each launch once, then the copy kernel, then
// deep_copy, each fenced and timed on its own, after `warmup` untimed rounds; a copy beyond doubt
// slower than the other after 3 rounds is timed no more (detail::beyond_doubt_slower). Alternating
// them puts a machine's bandwidth drift (a shared VM's moves by a third within minutes) into kernel
// and ceiling alike, so the ratio of their medians stops depending on when each was timed.
// `per_launch` > 1: each launch runs that many steps unfenced (a solver's iterations as its loop
// queues them) and its samples are per step; the copies are timed as many back to back.
// `stop`, asked after each round (a signal, agreed over the ranks), ends the timing without
// figures.
SameRunTiming time_with_copy_ceiling(std::int64_t elements, int element_bytes, int warmup,
                                     int rounds, const std::vector<std::function<void()>>& launches,
                                     int per_launch = 1, const std::function<bool()>& stop = {});

// Wall-clock seconds of a run's phases one after another (verification, set-up, steps, ...): where
// a run's time to result goes besides its timed steps. Host time, unfenced: a phase that ends
// with device work still in flight fences before end().
class PhaseClock {
 public:
  PhaseClock() : last_(std::chrono::steady_clock::now()) {}
  // The time since the previous end() (or the clock's start) was phase `name`, less
  // `interleaved_s` of it that went to phase `interleaved` (work timed between this phase's own,
  // such as the copy ceiling's rounds between a run's steps). A name ended again adds to its phase.
  void end(const std::string& name, const std::string& interleaved = {},
           const double interleaved_s = 0) {
    const auto now = std::chrono::steady_clock::now();
    add(name, std::chrono::duration<double>(now - last_).count() - interleaved_s);
    if (!interleaved.empty()) add(interleaved, interleaved_s);
    last_ = now;
  }
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }

 private:
  std::chrono::steady_clock::time_point last_;
  std::vector<std::pair<std::string, double>> phases_;
  void add(const std::string& name, const double seconds) {
    for (auto& [phase, s] : phases_)
      if (phase == name) {
        s += seconds;
        return;
      }
    phases_.emplace_back(name, seconds);
  }
};

namespace detail {
// Whether a copy whose rounds took `a` seconds each is beyond doubt slower than one whose rounds
// took `b`: after 3 rounds of each at least, `a`'s fastest is over a quarter slower than `b`'s
// median. Both run in the same rounds, so a machine's drift moves them together; the two copies
// of one device are either within a few percent (GPUs) or about 2x apart (hosts' deep_copy).
bool beyond_doubt_slower(const std::vector<double>& a, const std::vector<double>& b);
}  // namespace detail

// The copy ceiling alone (time_with_copy_ceiling without launches).
CopyBandwidth measure_copy_bandwidth(std::int64_t elements, int element_bytes, int warmup,
                                     int repeats);

}  // namespace kstencil
