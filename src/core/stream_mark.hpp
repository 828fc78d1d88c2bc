#pragma once
// A point in an execution instance's queue that the host or another instance can wait for without
// waiting for the work queued after it: on CUDA and HIP an event recorded on the instance's
// stream, so that a solver can read one iteration's result while the next iteration runs; on host
// back ends, whose kernels complete before their launch returns, nothing to wait for.
#include <Kokkos_Core.hpp>
#include <utility>

#include "core/side_instance.hpp"

namespace kstencil {

class StreamMark {
 public:
  StreamMark();
  ~StreamMark();
  StreamMark(const StreamMark&) = delete;
  StreamMark& operator=(const StreamMark&) = delete;
  StreamMark(StreamMark&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  StreamMark& operator=(StreamMark&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }

  // Marks the end of the work queued on `space` so far.
  void record(const Kokkos::DefaultExecutionSpace& space);
  // Returns once the work before the last record() is complete.
  void wait() const;
  // Work queued on `space` after this call waits for the work before the last record() (on any
  // instance); nothing to do on host back ends.
  void make_wait(const Kokkos::DefaultExecutionSpace& space) const;
  // Whether the host can run ahead of the default instance's work: where instances are streams.
  static constexpr bool asynchronous() { return SideInstance::concurrent(); }

 private:
  void* event_ = nullptr;  // the backend's event handle, owned here
};

}  // namespace kstencil
