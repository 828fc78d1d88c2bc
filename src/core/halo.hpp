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

// Copies a box of a field to or from a flat buffer, x fastest within the box.
template <class T, class KokkosLayout, bool Pack>
struct FaceCopy {
  Field<T, KokkosLayout> field;
  Kokkos::View<T*> buffer;
  Index3 lo, n;
  std::int64_t offset;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const std::int64_t q = offset + (i - lo[0]) + n[0] * ((j - lo[1]) + n[1] * (k - lo[2]));
    if (Pack)
      buffer(q) = field(i, j, k);
    else
      field(i, j, k) = buffer(q);
  }
};

template <bool Pack, class T, class KokkosLayout>
void copy_face(const Field<T, KokkosLayout>& field, const Kokkos::View<T*>& buffer, const Box& box,
               const std::int64_t offset) {
  using Policy = Kokkos::MDRangePolicy<Kokkos::Rank<3, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      Pack ? "kstencil::halo::pack" : "kstencil::halo::unpack",
      Policy({box.lo[0], box.lo[1], box.lo[2]}, {box.hi[0], box.hi[1], box.hi[2]}),
      FaceCopy<T, KokkosLayout, Pack>{field, buffer, box.lo, box.extents(), offset});
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
      link.send_host = Kokkos::create_mirror_view(link.send);
      link.receive_host = Kokkos::create_mirror_view(link.receive);
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

  // "none" (one rank), "device buffers" or "staged through host memory".
  std::string path() const {
    if (links_.empty()) return "none";
    return staged() ? "staged through host memory" : "MPI on the fields' memory";
  }

  HaloTimes times;

 private:
  struct Link {
    HaloFace face;
    Kokkos::View<T*> send, receive;
    typename Kokkos::View<T*>::HostMirror send_host, receive_host;
  };
  // Device memory MPI cannot read: copy through the host mirrors.
  bool staged() const {
    return !gpu_aware_ &&
           !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                       typename Kokkos::View<T*>::memory_space>::accessible;
  }
  MPI_Comm comm_;
  bool gpu_aware_;
  std::vector<Link> links_;
  std::vector<MPI_Request> requests_;
  std::vector<FieldType> fields_;
};

}  // namespace kstencil
