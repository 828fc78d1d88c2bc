#pragma once
// Face halo exchange for every solver: one ghost layer per neighbour (the 7-point stencils need no
// edges or corners). Faces are packed by Kokkos kernels into one contiguous buffer per neighbour,
// sent with MPI_Isend/MPI_Irecv, and unpacked by Kokkos kernels. Device buffers go to MPI directly
// where it is GPU-aware (asked at run time), else through host copies; between the GPU ranks of
// one node they are copied device to device instead (docs/ARCHITECTURE.md).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/decomposition.hpp"
#include "core/field.hpp"
#include "core/peer_memory.hpp"
#include "core/report.hpp"
#include "core/side_instance.hpp"

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
void copy_face(const Kokkos::DefaultExecutionSpace& space, const Field<T, KokkosLayout>& field,
               const Kokkos::View<T*>& buffer, const Box& box, const std::int64_t offset) {
  Kokkos::parallel_for(
      Pack ? "kstencil::halo::pack" : "kstencil::halo::unpack",
      Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>(
          space, 0, box.size()),
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

// Exchanges the faces of a fixed set of fields (same grid and layout) between neighbours. Packing,
// the copies to and from host memory and unpacking run on an execution space instance of their
// own (SideInstance): on GPUs they overlap an interior update launched on the default instance.
// Between GPU ranks of one node the packed faces are copied straight into the neighbour's receive
// buffer (peer::Mapping), with two empty MPI messages per face and exchange: "free" (the receiver
// has unpacked the previous faces) before the copy, "ready" after it.
template <class T, class KokkosLayout>
class HaloExchange {
 public:
  using FieldType = Field<T, KokkosLayout>;
  using Staging = Kokkos::View<T*, StagingSpace>;

  HaloExchange(const Grid& grid, const Decomposition& d, HaloSides sides, int fields_per_exchange)
      : comm_(d.comm), gpu_aware_(mpi_is_gpu_aware()) {
    for (const HaloFace& face : halo_faces(grid, d, sides)) {
      Link link;
      link.face = face;
      link.peer = !host_memory() && peer::available() && d.transport != HaloTransport::mpi &&
                  d.on_node[face.axis][face.side];
      if (d.transport == HaloTransport::peer && !host_memory() && !link.peer)
        throw std::runtime_error("[mpi] halo = \"peer\": rank " + std::to_string(face.neighbour) +
                                 " is not on this node; use \"auto\" or \"mpi\"");
      const std::size_t send_size = face.send.size() * fields_per_exchange;
      const std::size_t receive_size = face.receive.size() * fields_per_exchange;
      if (send_size > std::numeric_limits<int>::max() ||
          receive_size > std::numeric_limits<int>::max())
        throw std::length_error("a halo face holds more values than one MPI message can");
      link.send =
          Kokkos::View<T*>(Kokkos::view_alloc("halo_send", Kokkos::WithoutInitializing), send_size);
      if (link.peer) {
        link.receive_memory = std::make_shared<peer::Buffer>(receive_size * sizeof(T));
        link.receive = Kokkos::View<T*>(static_cast<T*>(link.receive_memory->data()), receive_size);
      } else {
        link.receive = Kokkos::View<T*>(
            Kokkos::view_alloc("halo_receive", Kokkos::WithoutInitializing), receive_size);
      }
      if (staged(link)) {
        link.send_host = Staging("halo_send_host", link.send.extent(0));
        link.receive_host = Staging("halo_receive_host", link.receive.extent(0));
      }
      links_.push_back(link);
    }
    if (!links_.empty()) side_ = std::make_shared<SideInstance>();
    connect_peers();
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

  // Packs the fields' faces and posts the messages; returns before they complete. Where the side
  // instance is concurrent (GPUs), packing and the copies to host buffers are only enqueued here,
  // and finish() sends the faces once they are packed.
  void start(const std::vector<FieldType>& fields) {
    if (links_.empty()) return;
    Kokkos::Timer timer;
    // The fields' last update (default instance) precedes their packing (side instance).
    Kokkos::DefaultExecutionSpace().fence();
    const Kokkos::DefaultExecutionSpace& space = side_->space();
    requests_.clear();
    free_requests_.clear();
    for (Link& link : links_) {
      std::int64_t offset = 0;
      for (const FieldType& field : fields) {
        if (link.face.send.empty()) break;
        halo_detail::copy_face<true>(space, field, link.send, link.face.send, offset);
        offset += link.face.send.size();
      }
      if (staged(link) && link.send.extent(0) > 0)
        Kokkos::deep_copy(space, link.send_host, link.send);
      if (!link.peer) continue;
      // This side's receive buffer is free (the last finish() unpacked it): say so, and expect
      // the neighbour's "ready"; for the send, wait for the neighbour's "free" before copying.
      if (link.receive.extent(0) > 0) {
        signal(MPI_Irecv, link, Message::ready, receive_id(link), requests_);
        signal(MPI_Isend, link, Message::free, receive_id(link), requests_);
      }
      if (link.send.extent(0) > 0)
        signal(MPI_Irecv, link, Message::free, send_id(link), free_requests_);
    }
    fields_ = fields;
    posted_ = false;
    times.pack += timer.seconds();
    if (!SideInstance::concurrent()) post();
  }

  // Waits for the faces and unpacks them into the ghost layers of the fields given to start().
  void finish() {
    if (links_.empty()) return;
    if (!posted_) post();
    Kokkos::Timer timer;
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    times.exchange += timer.seconds();
    timer.reset();
    const Kokkos::DefaultExecutionSpace& space = side_->space();
    for (Link& link : links_) {
      if (link.receive.extent(0) == 0) continue;
      if (staged(link)) Kokkos::deep_copy(space, link.receive, link.receive_host);
      std::int64_t offset = 0;
      for (const FieldType& field : fields_) {
        halo_detail::copy_face<false>(space, field, link.receive, link.face.receive, offset);
        offset += link.face.receive.size();
      }
    }
    space.fence();  // the shell's update (default instance) reads the ghost layers
    times.unpack += timer.seconds();
    fields_.clear();
  }

  void exchange(const std::vector<FieldType>& fields) {
    start(fields);
    finish();
  }

  // How faces travel: "none" (one rank), "host buffers", "device buffers (GPU-aware MPI)",
  // "staged through pinned host buffers", "peer copies between GPUs (CUDA IPC)", or peer copies to
  // the neighbours on this node and one of the others to the rest.
  std::string path() const {
    if (links_.empty()) return "none";
    std::size_t peers = 0;
    for (const Link& link : links_) peers += link.peer ? 1 : 0;
    const std::string peer_path = "peer copies between GPUs (CUDA IPC)";
    if (peers == links_.size()) return peer_path;
    const std::string mpi_path = !gpu_aware_ && !host_memory()
                                     ? "staged through pinned host buffers"
                                 : !host_memory() ? "device buffers (GPU-aware MPI)"
                                                  : "host buffers";
    return peers == 0 ? mpi_path : peer_path + " on this node, " + mpi_path + " to other nodes";
  }

  HaloTimes times;

 private:
  struct Link {
    HaloFace face;
    bool peer = false;  // the neighbour's GPU memory is mapped: copy faces straight into it
    Kokkos::View<T*> send, receive;
    Staging send_host, receive_host;
    std::shared_ptr<peer::Buffer> receive_memory;  // peer links: what the neighbour writes into
    std::shared_ptr<peer::Mapping> remote_memory;  // peer links: the neighbour's receive buffer
    Kokkos::View<T*, Kokkos::MemoryTraits<Kokkos::Unmanaged>> remote;
  };
  enum class Message { data, ready, free, handle };

  static bool host_memory() {
    return Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                      typename Kokkos::View<T*>::memory_space>::accessible;
  }
  // Device memory MPI cannot read: copy through pinned host buffers.
  bool staged(const Link& link) const { return !link.peer && !gpu_aware_ && !host_memory(); }
  // One face's messages: the sender's axis and side identify it at both ends (the receiver's link
  // faces the other way).
  static int send_id(const Link& link) { return 2 * link.face.axis + link.face.side; }
  static int receive_id(const Link& link) { return 2 * link.face.axis + 1 - link.face.side; }
  static int tag(Message kind, int id) { return 8 * static_cast<int>(kind) + id; }

  // An empty message of `kind` to or from the link's neighbour.
  template <class Call>
  void signal(Call call, const Link& link, Message kind, int id,
              std::vector<MPI_Request>& requests) {
    static char none = 0;
    requests.emplace_back();
    call(&none, 0, MPI_BYTE, link.face.neighbour, tag(kind, id), comm_, &requests.back());
  }

  // Peer links: each receiver sends its buffer's handle to its sender, which maps it.
  void connect_peers() {
    std::vector<peer::Handle> handles(2 * links_.size());
    std::vector<MPI_Request> requests;
    for (std::size_t l = 0; l < links_.size(); ++l) {
      Link& link = links_[l];
      if (!link.peer) continue;
      const int bytes = static_cast<int>(sizeof(peer::Handle));
      if (link.receive.extent(0) > 0) {
        handles[2 * l] = link.receive_memory->handle();
        requests.emplace_back();
        MPI_Isend(handles[2 * l].data(), bytes, MPI_BYTE, link.face.neighbour,
                  tag(Message::handle, receive_id(link)), comm_, &requests.back());
      }
      if (link.send.extent(0) > 0) {
        requests.emplace_back();
        MPI_Irecv(handles[2 * l + 1].data(), bytes, MPI_BYTE, link.face.neighbour,
                  tag(Message::handle, send_id(link)), comm_, &requests.back());
      }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t l = 0; l < links_.size(); ++l) {
      Link& link = links_[l];
      if (!link.peer || link.send.extent(0) == 0) continue;
      link.remote_memory = std::make_shared<peer::Mapping>(handles[2 * l + 1]);
      link.remote =
          decltype(link.remote)(static_cast<T*>(link.remote_memory->data()), link.send.extent(0));
    }
  }

  // Waits for the packed faces, then sends them: MPI messages, or copies into the neighbours'
  // buffers once they are free, followed by "ready".
  void post() {
    Kokkos::Timer timer;
    side_->space().fence();  // Kokkos 4 no longer orders MPI after kernels on any stream
    times.pack += timer.seconds();
    timer.reset();
    bool copies = false;
    for (Link& link : links_) {
      if (link.peer) {
        copies = copies || link.send.extent(0) > 0;
        continue;
      }
      if (link.receive.extent(0) > 0) {
        requests_.emplace_back();
        MPI_Irecv(staged(link) ? link.receive_host.data() : link.receive.data(),
                  static_cast<int>(link.receive.extent(0)), mpi_type<T>(), link.face.neighbour,
                  tag(Message::data, receive_id(link)), comm_, &requests_.back());
      }
      if (link.send.extent(0) > 0) {
        requests_.emplace_back();
        MPI_Isend(staged(link) ? link.send_host.data() : link.send.data(),
                  static_cast<int>(link.send.extent(0)), mpi_type<T>(), link.face.neighbour,
                  tag(Message::data, send_id(link)), comm_, &requests_.back());
      }
    }
    if (copies) {
      MPI_Waitall(static_cast<int>(free_requests_.size()), free_requests_.data(),
                  MPI_STATUSES_IGNORE);
      const Kokkos::DefaultExecutionSpace& space = side_->space();
      for (Link& link : links_)
        if (link.peer && link.send.extent(0) > 0) Kokkos::deep_copy(space, link.remote, link.send);
      space.fence();
      for (Link& link : links_)
        if (link.peer && link.send.extent(0) > 0)
          signal(MPI_Isend, link, Message::ready, send_id(link), requests_);
    }
    times.exchange += timer.seconds();
    posted_ = true;
  }

  MPI_Comm comm_;
  bool gpu_aware_;
  std::vector<Link> links_;
  std::shared_ptr<SideInstance> side_;  // shared by copies of the exchange
  std::vector<MPI_Request> requests_, free_requests_;
  std::vector<FieldType> fields_;
  bool posted_ = false;
};

}  // namespace kstencil
