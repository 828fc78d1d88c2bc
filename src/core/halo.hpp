#pragma once
// Face halo exchange for every solver: one ghost layer per neighbour (the 7-point stencils need no
// edges or corners). Faces are packed by Kokkos kernels into one contiguous buffer per neighbour,
// sent with MPI_Isend/MPI_Irecv, and unpacked by Kokkos kernels. Device buffers go to MPI directly
// where it is GPU-aware (asked at run time), else through host copies (docs/ARCHITECTURE.md).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/decomposition.hpp"
#include "core/field.hpp"
#include "core/report.hpp"

namespace kstencil {

// Which ghost layers an exchange fills: both, or only those towards lower (upper) neighbours, as
// FDTD's half-steps need (E reads H from below, H reads E from above).
enum class HaloSides { both, lower, upper };

// One neighbour's face in local indices: the owned layer sent to it and the ghost layer received.
struct HaloFace {
  int axis = 0, side = 0;  // side 0: towards the lower neighbour
  int neighbour = MPI_PROC_NULL;
  Box send, receive;
};
std::vector<HaloFace> halo_faces(const Grid& grid, const Decomposition& d, HaloSides sides);

// An update box (local indices) split for overlap: the interior, whose stencils read no ghost
// point, and the boundary shell (at most 6 disjoint boxes) that waits for the halo. Ghost layers
// (grid.allocated beyond grid.owned) mark the sides with a neighbour.
struct OverlapSplit {
  Box interior;
  std::vector<Box> shell;
};
OverlapSplit split_for_overlap(const Box& update, const Grid& grid);

// Time spent in each phase of the steps so far, seconds. With overlap, interior is the interior's
// launch (on a host its run; on a GPU the kernel runs during the exchange) and update the shell;
// without, update is the whole update.
struct HaloTimes {
  std::int64_t steps = 0;
  double pack = 0, exchange = 0, unpack = 0, interior = 0, update = 0;
};

// What a run reports of its decomposition and halo: facts "mpi" in summary.json and a console
// line. Collective: the phase times are the largest over the ranks, per step; the halo's share is
// of the phases' sum.
struct HaloReport {
  const Decomposition& d;
  bool overlap = false;
  std::string path;
  HaloTimes times;
};
void describe_halo(RunReport& report, const HaloReport& halo);

// Whether MPI takes device pointers on this run (Open MPI's MPIX_Query_cuda_support; false where
// MPI cannot say). Host-memory fields never need it.
bool mpi_is_gpu_aware();

namespace halo_detail {

// Host buffers for staged faces: pinned on GPUs, so that copies run at the link's full speed.
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
using StagingSpace = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using StagingSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

// Copies a box of a field to or from a flat buffer in the field's memory order (the contiguous
// index fastest): consecutive work items touch consecutive addresses on hosts and GPUs alike.
template <class T, class KokkosLayout, bool Pack>
struct FaceCopy {
  Field<T, KokkosLayout> field;
  Kokkos::View<T*> buffer;
  Kokkos::Array<Index, 3> lo, n;  // Kokkos::Array: usable in device code
  std::int64_t offset;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t q) const {
    constexpr bool right = std::is_same<KokkosLayout, Kokkos::LayoutRight>::value;
    constexpr int fast = right ? 2 : 0, slow = right ? 0 : 2;
    const std::int64_t line = q / n[fast];
    Index p[3];
    p[fast] = lo[fast] + (q - line * n[fast]);
    p[1] = lo[1] + line % n[1];
    p[slow] = lo[slow] + line / n[1];
    if (Pack)
      buffer(offset + q) = field(p[0], p[1], p[2]);
    else
      field(p[0], p[1], p[2]) = buffer(offset + q);
  }
};

template <bool Pack, class T, class KokkosLayout>
void copy_face(const Field<T, KokkosLayout>& field, const Kokkos::View<T*>& buffer, const Box& box,
               const std::int64_t offset) {
  Kokkos::parallel_for(
      Pack ? "kstencil::halo::pack" : "kstencil::halo::unpack",
      Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, box.size()),
      FaceCopy<T, KokkosLayout, Pack>{field,
                                      buffer,
                                      {box.lo[0], box.lo[1], box.lo[2]},
                                      {box.extent(0), box.extent(1), box.extent(2)},
                                      offset});
}

}  // namespace halo_detail

// Sets every ghost layer of `field` (allocated beyond owned) to `value`: a check that what a
// step reads there came from the exchange.
template <class T, class KokkosLayout>
void fill_ghost_layers(const Field<T, KokkosLayout>& field, const Grid& grid, const T value) {
  const Box owned = grid.to_local(grid.owned);
  const Box all = grid.to_local(grid.allocated);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      Box slab = all;
      if (side == 0) slab.hi[axis] = owned.lo[axis];
      if (side == 1) slab.lo[axis] = owned.hi[axis];
      if (slab.empty()) continue;
      const auto range = [&](int d) { return Kokkos::make_pair(slab.lo[d], slab.hi[d]); };
      Kokkos::deep_copy(Kokkos::subview(field, range(0), range(1), range(2)), value);
    }
}

// Exchanges the faces of a fixed set of fields (same grid and layout) between neighbours.
template <class T, class KokkosLayout>
class HaloExchange {
 public:
  using FieldType = Field<T, KokkosLayout>;
  using Staging = Kokkos::View<T*, halo_detail::StagingSpace>;

  HaloExchange(const Grid& grid, const Decomposition& d, HaloSides sides, int fields_per_exchange)
      : comm_(d.comm), gpu_aware_(mpi_is_gpu_aware()) {
    for (const HaloFace& face : halo_faces(grid, d, sides)) {
      Link link;
      link.face = face;
      link.send = Kokkos::View<T*>(Kokkos::view_alloc("halo_send", Kokkos::WithoutInitializing),
                                   face.send.size() * fields_per_exchange);
      link.receive =
          Kokkos::View<T*>(Kokkos::view_alloc("halo_receive", Kokkos::WithoutInitializing),
                           face.receive.size() * fields_per_exchange);
      if (staged()) {
        link.send_host = Staging("halo_send_host", link.send.extent(0));
        link.receive_host = Staging("halo_receive_host", link.receive.extent(0));
      }
      if (link.send.extent(0) > std::numeric_limits<int>::max() ||
          link.receive.extent(0) > std::numeric_limits<int>::max())
        throw std::length_error("a halo face holds more values than one MPI message can");
      links_.push_back(link);
    }
  }

  // One step: the exchange of `fields` and the update. update(-1) updates everything after the
  // exchange; with overlap_parts > 1, update(0) (the interior) runs while the faces are in flight
  // and update(1) .. update(overlap_parts - 1) (the shell) after them. One rank: update(-1) only.
  template <class Update>
  void step(const std::vector<FieldType>& fields, int overlap_parts, Update&& update) {
    ++times.steps;
    if (links_.empty()) {  // one rank: launch only, no fence (steps stay asynchronous)
      update(-1);
      return;
    }
    Kokkos::Timer timer;
    if (overlap_parts > 1) {
      start(fields);
      timer.reset();
      update(0);
      times.interior += timer.seconds();
      finish();
      timer.reset();
      for (int part = 1; part < overlap_parts; ++part) update(part);
    } else {
      exchange(fields);
      timer.reset();
      update(-1);
    }
    Kokkos::fence();
    times.update += timer.seconds();
  }

  // Packs the fields' faces and posts the sends and receives; returns before they complete.
  void start(const std::vector<FieldType>& fields) {
    if (links_.empty()) return;
    Kokkos::Timer timer;
    for (Link& link : links_) {
      std::int64_t offset = 0;
      for (const FieldType& field : fields) {
        if (link.face.send.empty()) break;
        halo_detail::copy_face<true>(field, link.send, link.face.send, offset);
        offset += link.face.send.size();
      }
    }
    Kokkos::fence();  // Kokkos 4 no longer orders MPI after kernels on the default stream
    for (Link& link : links_)
      if (staged() && link.send.extent(0) > 0) Kokkos::deep_copy(link.send_host, link.send);
    times.pack += timer.seconds();
    timer.reset();
    requests_.clear();
    for (Link& link : links_) {
      // Tag: the sender's axis and side; the receiver expects its neighbour's opposite side.
      const int send_tag = 2 * link.face.axis + link.face.side;
      const int receive_tag = 2 * link.face.axis + (1 - link.face.side);
      if (link.receive.extent(0) > 0) {
        requests_.emplace_back();
        MPI_Irecv(staged() ? link.receive_host.data() : link.receive.data(),
                  static_cast<int>(link.receive.extent(0)), mpi_type<T>(), link.face.neighbour,
                  receive_tag, comm_, &requests_.back());
      }
      if (link.send.extent(0) > 0) {
        requests_.emplace_back();
        MPI_Isend(staged() ? link.send_host.data() : link.send.data(),
                  static_cast<int>(link.send.extent(0)), mpi_type<T>(), link.face.neighbour,
                  send_tag, comm_, &requests_.back());
      }
    }
    times.exchange += timer.seconds();
    fields_ = fields;
  }

  // Waits for the faces and unpacks them into the ghost layers of the fields given to start().
  void finish() {
    if (links_.empty()) return;
    Kokkos::Timer timer;
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    times.exchange += timer.seconds();
    timer.reset();
    for (Link& link : links_) {
      if (link.receive.extent(0) == 0) continue;
      if (staged()) Kokkos::deep_copy(link.receive, link.receive_host);
      std::int64_t offset = 0;
      for (const FieldType& field : fields_) {
        halo_detail::copy_face<false>(field, link.receive, link.face.receive, offset);
        offset += link.face.receive.size();
      }
    }
    Kokkos::fence();
    times.unpack += timer.seconds();
    fields_.clear();
  }

  void exchange(const std::vector<FieldType>& fields) {
    start(fields);
    finish();
  }

  // How faces travel: "none" (one rank), "host buffers", "device buffers (GPU-aware MPI)" or
  // "staged through pinned host buffers".
  std::string path() const {
    if (links_.empty()) return "none";
    if (staged()) return "staged through pinned host buffers";
    return gpu_aware_ && !host_memory() ? "device buffers (GPU-aware MPI)" : "host buffers";
  }

  HaloTimes times;

 private:
  struct Link {
    HaloFace face;
    Kokkos::View<T*> send, receive;
    Staging send_host, receive_host;
  };
  static bool host_memory() {
    return Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                      typename Kokkos::View<T*>::memory_space>::accessible;
  }
  // Device memory MPI cannot read: copy through pinned host buffers.
  bool staged() const { return !gpu_aware_ && !host_memory(); }
  MPI_Comm comm_;
  bool gpu_aware_;
  std::vector<Link> links_;
  std::vector<MPI_Request> requests_;
  std::vector<FieldType> fields_;
};

}  // namespace kstencil
